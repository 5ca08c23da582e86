#!/usr/bin/env node
// `pnpm api-surface`: the size of the library's public API, read the way a user's compiler
// reads it. For every entry of packages/nest-leader/package.json `exports` (its ESM `types`
// file, as built by `pnpm build`, the same declarations `pnpm pack` ships), the names the
// TypeScript checker's `getExportsOfModule` sees: values (functions, classes, constants,
// enums) and types only (interfaces, type aliases), and how many carry an `@internal` tag
// (none should; the tag check must find the library's own @internal declarations, or the
// script fails). Then the file count of `src/core/`'s root (files directly in the folder).
// Prints plain text; exits 1 when a declaration file is missing (build first).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkgDir = join(root, 'packages/nest-leader');
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));

/** Each entry (`.`, `./core`, …) and its ESM declaration file. */
const entries = Object.entries(pkg.exports)
  .filter(([, target]) => typeof target === 'object' && target.import?.types)
  .map(([entry, target]) => ({ entry, file: join(pkgDir, target.import.types) }));

const missing = entries.filter(({ file }) => !existsSync(file));
if (missing.length > 0) {
  for (const { entry, file } of missing) console.error(`api-surface: ${entry}: no ${file}`);
  console.error('api-surface: run `pnpm build` first');
  process.exit(1);
}

const program = ts.createProgram(
  entries.map(({ file }) => file),
  {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
  },
);
const checker = program.getTypeChecker();

function isInternal(symbol) {
  return (symbol.declarations ?? []).some((declaration) =>
    ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === 'internal'),
  );
}

// Positive control of the @internal check: the library's modules do tag some declarations.
let taggedInModules = 0;
for (const source of program.getSourceFiles()) {
  if (!source.fileName.startsWith(join(pkgDir, 'dist'))) continue;
  const moduleSymbol = checker.getSymbolAtLocation(source);
  if (moduleSymbol === undefined) continue;
  taggedInModules += checker.getExportsOfModule(moduleSymbol).filter(isInternal).length;
}
if (taggedInModules === 0) {
  console.error(
    'api-surface: no @internal declaration found in any module: the tag check is broken',
  );
  process.exit(1);
}

let total = 0;
console.log('entry                      names  values  types  @internal');
for (const { entry, file } of entries) {
  const source = program.getSourceFile(file);
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  if (moduleSymbol === undefined) {
    console.error(`api-surface: ${entry}: ${file} is not a module`);
    process.exit(1);
  }
  let values = 0;
  let types = 0;
  let internal = 0;
  for (const exported of checker.getExportsOfModule(moduleSymbol)) {
    const symbol =
      exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    if (symbol.flags & ts.SymbolFlags.Value) values++;
    else types++;
    if (isInternal(symbol)) internal++;
  }
  total += values + types;
  const name = `nest-leader${entry.slice(1)}`;
  console.log(
    `${name.padEnd(26)} ${String(values + types).padStart(5)}  ${String(values).padStart(6)}  ` +
      `${String(types).padStart(5)}  ${String(internal).padStart(9)}`,
  );
}
console.log(`sum over the entries       ${String(total).padStart(5)}`);
console.log(
  `@internal declarations in the library's modules (the check's control): ${taggedInModules}`,
);

const coreDir = join(pkgDir, 'src/core');
const coreRootFiles = readdirSync(coreDir).filter((name) => statSync(join(coreDir, name)).isFile());
console.log(`src/core/ root files: ${coreRootFiles.length}`);
