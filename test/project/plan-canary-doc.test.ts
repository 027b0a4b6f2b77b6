/** The plan guide's (docs/cli-plan.md) plan of the rollout example's canary stage is what `node-agents plan --markdown` prints now. */
import * as fs from 'fs';
import * as path from 'path';
import { PLAN_CANARY_FILE, planCanary } from '../../examples/plan-canary';
import { REPO } from '../util/paths';

test('examples/log-collector-rollout/plan-canary.md is current (regenerate: npx ts-node --project test/tsconfig.json examples/plan-canary.ts)', () => {
  const { markdown, code } = planCanary();
  expect(code).toBe(0);
  // 40 s of rollout and the canary gate's 10 min bake (the sync runs the gate hook before the later waves)
  expect(markdown).toContain('| logs | 1 of 3 | 1 | 0 | 0 | 0 | 19 | expected 10 min 40 s\\, including the gate\\\'s bake \\(10 min\\) |');
  expect(fs.readFileSync(PLAN_CANARY_FILE, 'utf8')).toBe(markdown);
});

test('the plan guide shows plan-canary.md as it is', () => {
  const readme = fs.readFileSync(path.join(REPO, 'docs', 'cli-plan.md'), 'utf8');
  const shown = /<!-- plan-canary\.md -->\n([\s\S]*?)<!-- \/plan-canary\.md -->/.exec(readme);
  expect(shown).not.toBeNull();
  expect(shown![1]).toBe(fs.readFileSync(PLAN_CANARY_FILE, 'utf8'));
});
