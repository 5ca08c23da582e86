/**
 * Makes `to` look like `from` to anything that reads method metadata: every own
 * reflect-metadata key (Nest, @nestjs/schedule, @nestjs/event-emitter, @nestjs/microservices
 * all store method metadata on the function itself), plus `name` and `length`.
 *
 * Metadata stored by property key (`design:paramtypes`, route params) lives on the class
 * prototype or constructor, not on the function, and stays valid without copying.
 */
export function copyMethodMetadata(from: object, to: object): void {
  for (const key of Reflect.getOwnMetadataKeys(from)) {
    Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, from), to);
  }
  for (const property of ['name', 'length'] as const) {
    Object.defineProperty(to, property, {
      ...Object.getOwnPropertyDescriptor(from, property),
      configurable: true,
    });
  }
}
