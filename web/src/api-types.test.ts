// src/api-types.ts is generated from docs/openapi.json (`npm run gen:api`) and committed.
// This regenerates it into a temporary file, exactly as the `gen:api` script does, and
// fails when the committed file differs: the UI's types cannot drift from the document.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const web = fileURLToPath(new URL('..', import.meta.url));

/** The `gen:api` script's arguments, with its output sent to `out`. */
function genArgs(out: string): string[] {
  const pkg = JSON.parse(readFileSync(join(web, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const [tool, ...args] = pkg.scripts['gen:api'].trim().split(/\s+/);
  expect(tool).toBe('openapi-typescript');
  const o = args.findIndex((a) => a === '-o' || a === '--output');
  expect(args[o + 1]).toBe('src/api-types.ts');
  args[o + 1] = out;
  return args;
}

describe('src/api-types.ts', () => {
  it('is what `npm run gen:api` makes from docs/openapi.json', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bai-api-types-'));
    try {
      const out = join(dir, 'api-types.ts');
      const cli = join(web, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
      execFileSync(process.execPath, [cli, ...genArgs(out)], { cwd: web, stdio: 'pipe' });
      const fresh = readFileSync(out, 'utf8');
      const committed = readFileSync(join(web, 'src', 'api-types.ts'), 'utf8');
      expect(committed === fresh, 'src/api-types.ts is stale: run `npm run gen:api` in web/ and commit it').toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
