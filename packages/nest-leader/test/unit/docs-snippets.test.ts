/**
 * Every TypeScript code block of the repository's READMEs and of the package's docs pages
 * (docs/*.md; not the generated docs/api) is compiled against the built package, through its
 * public entries only (`nest-leader`, `nest-leader/testing`, resolved by the package's
 * `exports`), so a snippet cannot drift from the API. What a block is, its info string and the
 * line before it say (the convention is described in the root README, "Code blocks in the docs"):
 *
 * - `<!-- examples/NAME.ts -->` then ```` ```ts ````: that file of examples/, which `tsc -b`
 *   compiles (examples/tsconfig.json) and readme-examples.test.ts keeps equal to the quote.
 * - ```` ```ts ````: a whole module, compiled as written.
 * - ```` ```ts fragment ````: part of a module. Compiled with the imports it leaves out added —
 *   a name exported by one of {@link FRAGMENT_IMPORTS} (the package's entries, then the Nest
 *   packages; first match wins), `assert` from
 *   `node:assert/strict` — and with what a `<!-- given: … -->` line right before the block
 *   lists, `;`-separated, declared: `name: Type` as `declare const`, `interface …`, `type …`,
 *   `class …` or `function …` as written.
 * - ```` ```ts app=nest11:PATH ```` / ```` app=nest12:PATH ````: a file of the getting-started
 *   app, which the consumer matrix writes into a fresh Nest 11 (Jest) or Nest 12 (Vitest) app
 *   with the README's quick start and runs there against the packed tarball
 *   (test/consumers/getting-started.ts). Checked here for its shape only.
 *
 * A JavaScript or TypeScript block under any other info string (js, typescript, tsx…) fails:
 * no block is skipped silently. Cost: one TypeScript program over the snippets (~5 s).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The package root: the nearest directory above this file whose package.json is nest-leader's. */
function findPackageDir(): string {
  let dir = fileURLToPath(new URL('.', import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && /"name": "nest-leader"/.test(readFileSync(manifest, 'utf8'))) {
      return dir;
    }
    assert.notEqual(dirname(dir), dir, 'no nest-leader package.json above this test');
    dir = dirname(dir);
  }
}
const packageDir = findPackageDir();
const repoDir = join(packageDir, '../..');

/** The package's public entries (`nest-leader`, `nest-leader/testing`, …), from its exports. */
const ENTRIES = Object.keys(
  (
    JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    }
  ).exports,
)
  .filter((subpath) => subpath !== './package.json')
  .map((subpath) => subpath.replace(/^\./, 'nest-leader'));

/** Modules a fragment's missing imports come from, in order of precedence. */
const FRAGMENT_IMPORTS = [
  ...ENTRIES,
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/schedule',
  '@nestjs/terminus',
  '@nestjs/testing',
];

/** The fewest blocks of each kind found when this test was written: a floor against a broken extractor. */
const AT_LEAST = { example: 21, module: 0, fragment: 5, app: 2 };

type Kind = keyof typeof AT_LEAST;

interface Block {
  page: string;
  line: number;
  kind: Kind;
  code: string;
  given: string[];
  app?: { nest: 11 | 12; path: string };
}

/** README.md files of the repository (outside dependencies and outputs) and docs/*.md. */
function pages(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!['node_modules', 'dist', 'build', 'tools', 'api'].includes(entry.name)) walk(path);
      } else if (entry.name === 'README.md') found.push(path);
    }
  };
  walk(repoDir);
  const docs = join(packageDir, 'docs');
  for (const name of readdirSync(docs)) if (name.endsWith('.md')) found.push(join(docs, name));
  return found.map((path) => relative(repoDir, path)).sort();
}

const SCRIPT_LANGUAGE = /^(ts|typescript|tsx|mts|cts|js|javascript|jsx|mjs|cjs)$/;

function blocksOf(page: string): Block[] {
  const lines = readFileSync(join(repoDir, page), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*```(\S*)(.*)$/.exec(lines[i]!);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end]!)) end += 1;
    assert.ok(end < lines.length, `${page}:${i + 1}: a code block that is never closed`);
    const [, language, rest] = open;
    const flags = rest!.trim();
    const code = lines.slice(i + 1, end).join('\n');
    const where = `${page}:${i + 1}`;
    if (SCRIPT_LANGUAGE.test(language!)) {
      assert.equal(language, 'ts', `${where}: write \`\`\`ts (and the convention's flags)`);
      const before = lines[i - 1] ?? '';
      const given = /^<!-- given: (.*) -->$/.exec(before)?.[1];
      const app = /^app=nest(11|12):(\S+)$/.exec(flags);
      let kind: Kind;
      if (/^<!-- examples\/[\w.-]+ -->$/.test(before)) kind = 'example';
      else if (flags === 'fragment') kind = 'fragment';
      else if (app) kind = 'app';
      else kind = 'module';
      assert.ok(
        kind !== 'module' || flags === '',
        `${where}: unknown info string "${flags}" (fragment, app=nest11:PATH, app=nest12:PATH)`,
      );
      assert.ok(given === undefined || kind === 'fragment', `${where}: "given" is for fragments`);
      blocks.push({
        page,
        line: i + 1,
        kind,
        code,
        given: given ? splitGiven(given) : [],
        ...(app ? { app: { nest: Number(app[1]) as 11 | 12, path: app[2]! } } : {}),
      });
    }
    i = end;
  }
  return blocks;
}

/** `a: A; interface B { x(): void; y: number }` → its declarations (`;` inside braces kept). */
function splitGiven(given: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let part = '';
  for (const char of given) {
    if (char === '{' || char === '(') depth += 1;
    if (char === '}' || char === ')') depth -= 1;
    if (char === ';' && depth === 0) {
      parts.push(part.trim());
      part = '';
    } else part += char;
  }
  return [...parts, part.trim()].filter(Boolean);
}

/**
 * name → module, for every name the fragment modules export (first module wins), and the
 * program that found them (its declaration files are reused by the snippets' program).
 */
function exportedNames(
  host: ts.CompilerHost,
  options: ts.CompilerOptions,
): { names: Map<string, string>; program: ts.Program } {
  const probe = join(packageDir, 'build/snippets/probe.ts');
  const text = FRAGMENT_IMPORTS.map((m, i) => `import * as m${i} from '${m}';`).join('\n');
  const program = ts.createProgram([probe], options, withFiles(host, new Map([[probe, text]])));
  const checker = program.getTypeChecker();
  const names = new Map<string, string>();
  for (const statement of program.getSourceFile(probe)!.statements) {
    const declaration = statement as ts.ImportDeclaration;
    const module = (declaration.moduleSpecifier as ts.StringLiteral).text;
    const symbol = checker.getSymbolAtLocation(declaration.moduleSpecifier);
    assert.ok(symbol, `${module} does not resolve from the package`);
    for (const exported of checker.getExportsOfModule(symbol)) {
      if (!names.has(exported.name) && exported.name !== 'default') {
        names.set(exported.name, module);
      }
    }
  }
  return { names, program };
}

/** A compiler host that also serves `files` (absolute path → text) from memory. */
function withFiles(host: ts.CompilerHost, files: Map<string, string>): ts.CompilerHost {
  return {
    ...host,
    fileExists: (path) => files.has(path) || host.fileExists(path),
    readFile: (path) => files.get(path) ?? host.readFile(path),
    getSourceFile: (path, languageVersion, onError, shouldCreate) => {
      const text = files.get(path);
      return text === undefined
        ? host.getSourceFile(path, languageVersion, onError, shouldCreate)
        : ts.createSourceFile(path, text, languageVersion, true);
    },
  };
}

/** The fragment as a module: its missing imports and its given names declared first. */
function fragmentModule(block: Block, names: Map<string, string>): string {
  const declared = new Set([
    ...[
      ...block.code.matchAll(/\b(?:class|const|let|var|function|interface|type|enum) (\w+)/g),
    ].map(([, name]) => name!),
    // What the fragment imports itself.
    ...[...block.code.matchAll(/^import (?:type )?\{([^}]*)\}/gm)].flatMap(([, list]) =>
      list!.split(',').map((item) => item.trim().split(/\s+/).pop()!),
    ),
  ]);
  const byModule = new Map<string, string[]>();
  const given = block.given.map((g) =>
    /^(type|interface|class|function) /.test(g) ? `declare ${g}` : `declare const ${g};`,
  );
  for (const [, name] of [...given, block.code].join('\n').matchAll(/\b([A-Za-z_]\w*)\b/g)) {
    const module = names.get(name!);
    if (!module || declared.has(name!)) continue;
    const list = byModule.get(module) ?? [];
    if (!list.includes(name!)) byModule.set(module, [...list, name!]);
  }
  const imports = [...byModule].map(
    ([module, list]) => `import { ${list.join(', ')} } from '${module}';`,
  );
  if (/\bassert\./.test(block.code)) imports.push(`import assert from 'node:assert/strict';`);
  return [...imports, ...given, 'export {};', block.code].join('\n');
}

test('every TypeScript block of the READMEs and docs pages compiles against the built package', () => {
  const blocks = pages().flatMap(blocksOf);
  const count = (kind: Kind) => blocks.filter((b) => b.kind === kind).length;
  for (const kind of Object.keys(AT_LEAST) as Kind[]) {
    assert.ok(count(kind) >= AT_LEAST[kind], `${count(kind)} ${kind} blocks, fewer than ever`);
  }

  const config = ts.readConfigFile(join(repoDir, 'tsconfig.base.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(
    {
      compilerOptions: {
        ...config.config.compilerOptions,
        composite: false,
        declaration: false,
        declarationMap: false,
        sourceMap: false,
        noEmit: true,
        // A snippet may import more than it shows using.
        noUnusedLocals: false,
        noUnusedParameters: false,
      },
    },
    ts.sys,
    packageDir,
  );
  const host = ts.createCompilerHost(options);
  const { names, program: probe } = exportedNames(host, options);

  // Modules and fragments, each as a file of its own under build/snippets/ (inside the package,
  // so `nest-leader` resolves through the package's own exports, as a user's import does).
  const compiled = blocks.filter((b) => b.kind === 'module' || b.kind === 'fragment');
  const files = new Map(
    compiled.map((block) => [
      join(packageDir, 'build/snippets', `${block.page.replace(/\W+/g, '_')}_${block.line}.ts`),
      block.kind === 'fragment' ? fragmentModule(block, names) : block.code,
    ]),
  );
  const program = ts.createProgram([...files.keys()], options, withFiles(host, files), probe);
  const paths = [...files.keys()];
  const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const file = diagnostic.file?.fileName ?? '';
    const block = compiled[paths.indexOf(file)];
    const at = block ? `${block.page}:${block.line} (${block.kind})` : file;
    return `${at}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
  });
  assert.deepEqual(problems, [], `${problems.length} snippet errors:\n${problems.join('\n')}`);
  assert.equal(program.getRootFileNames().length, count('module') + count('fragment'));

  // The getting-started app's files: one e2e test per Nest line, at a path of the app.
  const apps = blocks
    .filter((b) => b.kind === 'app')
    .map((b) => `nest${b.app!.nest}:${b.app!.path}`);
  assert.deepEqual(apps.sort(), ['nest11:test/app.e2e-spec.ts', 'nest12:test/app.e2e-spec.ts']);
  assert.equal(
    blocks.length,
    Object.keys(AT_LEAST).reduce((n, k) => n + count(k as Kind), 0),
  );
  console.log(
    `# snippets: ${blocks.length} blocks in ${new Set(blocks.map((b) => b.page)).size} pages: ` +
      (Object.keys(AT_LEAST) as Kind[]).map((k) => `${count(k)} ${k}`).join(', '),
  );
});
