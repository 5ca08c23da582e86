import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';

/**
 * The prototype whose methods Nest calls for a discovered provider or controller: its
 * instance's (so a `useFactory` or `useValue` provider counts as the class it returns), or,
 * for request-scoped and transient classes, which have no single instance, its class's.
 * `undefined` for providers that are not objects (values, not-yet-resolved factories).
 */
export function providedPrototype(wrapper: InstanceWrapper): object | undefined {
  const prototype: unknown = wrapper.isDependencyTreeStatic()
    ? isObject(wrapper.instance) && Object.getPrototypeOf(wrapper.instance)
    : wrapper.metatype?.prototype;
  return isObject(prototype) ? prototype : undefined;
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
