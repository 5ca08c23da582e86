/**
 * Loads the optional peers (`@nestjs/terminus`, `@nestjs/microservices`) when first needed, so
 * applications that never use them need not install them.
 *
 * This is the ESM build's version (`import()`). The CommonJS build uses
 * `optional-peers-cjs.cts` instead (a tshy dialect polyfill), which `require()`s them: test
 * runners with their own CommonJS loader (Jest) cannot run `import()` inside CommonJS code.
 */
export const importTerminus = (): Promise<typeof import('@nestjs/terminus')> =>
  import('@nestjs/terminus');

export const importMicroservices = (): Promise<typeof import('@nestjs/microservices')> =>
  import('@nestjs/microservices');
