/**
 * The real Prometheus tools the alert and gate tests run (Debian's `prometheus` package ships both
 * /usr/bin/prometheus and /usr/bin/promtool). Without them the suites are skipped, except under
 * CI=true, where a missing binary fails with the install command.
 */
import { execFileSync, spawnSync } from 'child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { stringify } from 'yaml';
import { Manifest } from './manifests';

export const PROMTOOL = process.env.PROMTOOL_BIN ?? '/usr/bin/promtool';
export const PROMETHEUS = process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus';
export const INSTALL_HINT = 'apt-get update && apt-get install -y --no-install-recommends prometheus';

/**
 * `describe`, or `describe.skip` with a warning when a binary is missing; under CI=true a missing
 * binary is a failing test instead.
 */
export function describeWithBinaries(name: string, binaries: readonly string[], fn: () => void): void {
  const missing = binaries.filter((b) => !existsSync(b));
  if (missing.length === 0) {
    describe(name, fn);
    return;
  }
  const why = `${name} (SKIPPED: ${missing.join(', ')} not found; install with: ${INSTALL_HINT})`;
  console.warn(why);
  if (process.env.CI === 'true') {
    test(`${name}: the binaries are installed under CI`, () => {
      throw new Error(`${missing.join(', ')} not found. .ci/run must install them: ${INSTALL_HINT}`);
    });
  }
  describe.skip(why, fn);
}

/** The rule file of the PrometheusRule objects among `manifests` (their spec.groups, in order). */
export function ruleFile(manifests: Manifest[]): { groups: Manifest[] } {
  const rules = manifests.filter((m) => m.kind === 'PrometheusRule');
  if (rules.length === 0) throw new Error('no PrometheusRule among the manifests');
  return { groups: rules.flatMap((r) => r.spec.groups) };
}

export interface ToolRun {
  readonly status: number | null;
  readonly output: string;
}

/** Runs promtool in a fresh temporary directory holding `files` (name → YAML-able value). */
export function promtool(args: string[], files: { [name: string]: unknown }): ToolRun {
  const dir = mkdtempSync(path.join(tmpdir(), 'promtool-'));
  try {
    for (const [name, value] of Object.entries(files)) writeFileSync(path.join(dir, name), stringify(value));
    const run = spawnSync(PROMTOOL, args, { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function promtoolVersion(): string {
  return execFileSync(PROMTOOL, ['--version'], { encoding: 'utf8' }).split('\n')[0];
}

/**
 * Recorded fluent-bit series (`metric{name="alias"}` → one value per scrape, null where absent) as promtool
 * input series, each with the pod's labels and its alias as `name`.
 */
export function recordedInput(series: Record<string, Array<number | null>>, pod: Record<string, string>): Array<{ series: string; values: string }> {
  return Object.entries(series).map(([metric, values]) => {
    const [, name, alias] = /^([a-z_]+)\{name="([^"]+)"\}$/.exec(metric)!;
    const labels = Object.entries({ ...pod, name: alias }).map(([k, v]) => `${k}="${v}"`).join(',');
    return { series: `${name}{${labels}}`, values: values.map((v) => (v === null ? '_' : String(v))).join(' ') };
  });
}
