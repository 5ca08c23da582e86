/**
 * The CommonJS build's `optional-peers.ts` (tshy dialect polyfill): `require()` instead of
 * `import()`, which Jest's CommonJS loader cannot run. Nest 11 apps use the CommonJS majors of
 * these peers (`@nestjs/terminus` 11), which `require()` loads directly.
 */
export const importTerminus = async (): Promise<typeof import('@nestjs/terminus')> =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose
  require('@nestjs/terminus');

export const importMicroservices = async (): Promise<typeof import('@nestjs/microservices')> =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose
  require('@nestjs/microservices');
