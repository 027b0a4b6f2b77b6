/**
 * Writes plan-canary.md: the pull request comment `node-agents plan --markdown` prints for the canary stage
 * (0-before -> 1-canary) on the example inventory. The README shows it; a test checks it is current.
 *
 *   npx ts-node --project test/tsconfig.json examples/plan-canary.ts
 */
import * as fs from 'fs';
import * as path from 'path';
import { runCli } from '../src/cli/run';

const EXAMPLE = path.join(__dirname, 'log-collector-rollout');

export const PLAN_CANARY_ARGS = ['plan', '--nodes', '../inventories/mixed-cluster.json', '--before', 'dist/0-before', '--after', 'dist/1-canary', '--markdown'];
export const PLAN_CANARY_FILE = path.join(EXAMPLE, 'plan-canary.md');

/** The markdown, and the exit code (0: the canary stage is safe). */
export function planCanary(): { markdown: string; code: number } {
  let markdown = '';
  let errors = '';
  const code = runCli(PLAN_CANARY_ARGS, {
    stdout: { write: (t: string) => (markdown += t) },
    stderr: { write: (t: string) => (errors += t) },
    cwd: EXAMPLE,
  });
  if (errors !== '') throw new Error(errors);
  return { markdown, code };
}

if (require.main === module) {
  fs.writeFileSync(PLAN_CANARY_FILE, planCanary().markdown);
}
