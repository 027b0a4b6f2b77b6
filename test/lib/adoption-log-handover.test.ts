/**
 * The log hand-over from the fluent-bit chart's collector to the library's (README "Logs across the switch"),
 * measured with fluent-bit 5.1.1 built from source: test/fixtures/fluent-bit-handover.json records the tail inputs
 * that ran and, per file, the lines each run lost or delivered twice. These tests tie the record to the code (the
 * collector still renders exactly the tail inputs that were measured; change one and the measurement must be
 * redone) and to the README (the numbers it states are the record's).
 *
 * What the record shows follows fluent-bit 5.1.1 plugins/in_tail: tail_file.c set_file_position seeks a file with no
 * DB offset to its end when read_from_head is off (and records that offset in the DB), and resumes a file from its
 * DB offset; tail.c in_tail_init turns read_from_head on after the first scan when
 * read_newly_discovered_files_from_head is on (its config-map default "true"), so files found by a later scan are
 * read from their start, while a file created before the first scan is read from its end.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import { AgentAdoption } from '../../src/adoption/adoption';
import { FLUENT_BIT_CHART } from '../../src/adoption/charts';
import { LogCollectorDaemonSet } from '../../src/constructs/log-collector-daemon-set';
import { FLUENT_BIT_IMAGE } from '../../src/fluent-bit/config';
import { FluentBitOutput } from '../../src/fluent-bit/outputs';
import { Manifest, synthManifests } from '../util/manifests';
import { FIXTURES, REPO } from '../util/paths';
import { upstream } from '../util/upstream';

interface FileRecord {
  readonly role: string;
  readonly written: number;
  readonly writtenBeforeTheChartCollectorsFirstRead: number;
  readonly shippedByTheChartCollector: number;
  readonly lost: number;
  readonly lostAtTheSwitch: number;
  readonly lostSeconds?: number;
  readonly lostAtTheRestart: number;
  readonly duplicated: number;
  readonly beforeFirstReadShippedByTheLibrary: number;
}
interface Run {
  readonly scenario: 'adopt' | 'adopt-outage' | 'control' | 'chart';
  readonly gapSeconds: number;
  readonly sigtermToExitSeconds: number;
  readonly sigtermToStartSeconds: number;
  readonly restartSeconds: number;
  readonly files: { [file: string]: FileRecord };
}
interface Record {
  readonly recorded: string;
  readonly ratePerFile: number;
  readonly tailInput: { chart: { [key: string]: string }; adopting: { [key: string]: string }; completed: { [key: string]: string } };
  readonly runs: Run[];
}

const RECORD: Record = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'fluent-bit-handover.json'), 'utf8'));
const LOKI = FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' });
/** Files the collectors found running (w1-w3), created in the gap (w4), while B ran (w5), during B's restart (w6). */
const RUNNING = ['w1', 'w2', 'w3'];

function synth(completed: boolean): Manifest[] {
  const chart = new Chart(Testing.app(), 'test');
  new LogCollectorDaemonSet(chart, 'logs', { outputs: [LOKI], adopt: AgentAdoption.fluentBitChart({ namespace: 'logging', completed }) });
  return synthManifests(chart);
}
/** The key/value lines of the first section `[name]` whose text contains `marker`. */
function section(text: string, name: string, marker: string): { [key: string]: string } {
  const found = text.split(/\n(?=\[)/).find((s) => s.startsWith(`[${name}]`) && s.includes(marker));
  if (found === undefined) throw new Error(`no [${name}] with ${marker}`);
  return Object.fromEntries([...found.matchAll(/^\s+(\S+)[ \t]+(.*?)\s*$/gm)].map((m) => [m[1], m[2]]));
}
function tailInput(manifests: Manifest[]): { [key: string]: string } {
  const cm = manifests.find((m) => m.kind === 'ConfigMap');
  return section(cm.data['fluent-bit.conf'], 'INPUT', 'tail_containers');
}
function runs(scenario: Run['scenario']): Run[] {
  const found = RECORD.runs.filter((r) => r.scenario === scenario);
  if (found.length === 0) throw new Error(`no ${scenario} run recorded`);
  return found;
}
/** "121" or "549–550": how the README states the spread of a number over files. */
function spread(values: number[]): string {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return lo === hi ? `${lo}` : `${lo}–${hi}`;
}
function readmeParagraph(): string {
  const readme = fs.readFileSync(path.join(REPO, 'docs', 'adopting-helm.md'), 'utf8');
  const start = readme.indexOf('**Logs across the switch (fluent-bit).**');
  const end = readme.indexOf('**With Argo CD**', start);
  expect(start).toBeGreaterThan(-1);
  expect(end).toBeGreaterThan(start);
  // whitespace collapsed: the guide's line breaks are not part of what it states
  return readme.substring(start, end).replace(/\s+/g, ' ');
}

describe('the collector renders the tail inputs that were measured', () => {
  const adopting = synth(false);
  const completed = synth(true);

  test('while adopting: exactly the recorded input (Read_from_Head Off, DB on the host, no read_newly_discovered_files_from_head: its default, on)', () => {
    const input = tailInput(adopting);
    expect(input).toEqual(RECORD.tailInput.adopting);
    expect(input.Read_from_Head).toBe('Off');
    expect(Object.keys(input).filter((k) => /read_newly_discovered_files_from_head/i.test(k))).toEqual([]);
    // the DB sits in the state directory, a writable hostPath mounted at its own path: it outlives the pod
    const ds = adopting.find((m) => m.kind === 'DaemonSet');
    const volume = ds.spec.template.spec.volumes.find((v: Manifest) => v.hostPath !== undefined && input.DB.startsWith(v.hostPath.path + '/'));
    expect(volume).toBeDefined();
    const mount = ds.spec.template.spec.containers[0].volumeMounts.find((m: Manifest) => m.name === volume.name);
    expect(mount).toMatchObject({ mountPath: volume.hostPath.path });
    expect(mount.readOnly).not.toBe(true);
  });

  test('once completed: exactly the recorded input of the restart (Read_from_Head On, the same DB)', () => {
    const input = tailInput(completed);
    expect(input).toEqual(RECORD.tailInput.completed);
    expect(input.Read_from_Head).toBe('On');
    expect(input.DB).toBe(tailInput(adopting).DB);
  });

  test('the chart\'s collector ran the chart\'s default tail input (values.yaml config.inputs), at the fluent-bit version the chart and the library pin', () => {
    const inputs: string = upstream('fluent-bit-chart/values.json').config.inputs;
    expect(section(inputs, 'INPUT', 'Name tail')).toEqual(RECORD.tailInput.chart);
    expect(RECORD.recorded).toContain(`fluent-bit ${FLUENT_BIT_CHART.appVersion} built from source`);
    expect(FLUENT_BIT_IMAGE.endsWith(`:${FLUENT_BIT_CHART.appVersion}`)).toBe(true);
  });
});

describe('the record', () => {
  test('adopting: the files already there lose the lines of SIGTERM → start (rate × seconds), a file created in the gap its first lines; nothing is duplicated, nothing lost at the completed restart', () => {
    for (const run of runs('adopt')) {
      for (const f of RUNNING) {
        const expected = RECORD.ratePerFile * run.sigtermToStartSeconds;
        expect(Math.abs(run.files[f].lostAtTheSwitch - expected)).toBeLessThanOrEqual(RECORD.ratePerFile * 0.25);
      }
      expect(run.files.w4.lostAtTheSwitch).toBeGreaterThan(0);
      expect(run.files.w4.lostAtTheSwitch).toBeLessThan(RECORD.ratePerFile * run.sigtermToStartSeconds);
      expect(run.files.w5.lost).toBe(0);
      expect(run.files.w6.lost).toBe(0);
      for (const file of Object.values(run.files)) {
        expect(file.duplicated).toBe(0);
        expect(file.lostAtTheRestart).toBe(0);
      }
    }
  });

  test('adopting after the chart\'s output was down: the lines it had read (8 s) are lost with the gap, its exit bounded by its Grace (5 s)', () => {
    for (const run of runs('adopt-outage')) {
      expect(run.sigtermToExitSeconds).toBeLessThanOrEqual(5);
      for (const f of RUNNING) {
        expect(run.files[f].shippedByTheChartCollector).toBe(0);
        const expected = RECORD.ratePerFile * (8 + run.sigtermToStartSeconds);
        expect(Math.abs(run.files[f].lostAtTheSwitch - expected)).toBeLessThanOrEqual(RECORD.ratePerFile * 0.25);
      }
      for (const file of Object.values(run.files)) {
        expect(file.duplicated).toBe(0);
        expect(file.lostAtTheRestart).toBe(0);
      }
    }
  });

  test('the control (Read_from_Head On, empty DB): nothing lost, every line the chart\'s collector shipped delivered twice', () => {
    for (const run of runs('control')) {
      for (const file of Object.values(run.files)) expect(file.lost).toBe(0);
      for (const f of RUNNING) {
        expect(run.files[f].shippedByTheChartCollector).toBeGreaterThan(0);
        expect(run.files[f].duplicated).toBe(run.files[f].shippedByTheChartCollector);
        expect(run.files[f].beforeFirstReadShippedByTheLibrary).toBe(run.files[f].writtenBeforeTheChartCollectorsFirstRead);
      }
    }
  });
});

describe('the README states the record', () => {
  const text = readmeParagraph();

  test('the version measured and the rate', () => {
    expect(text).toContain(`fluent-bit ${FLUENT_BIT_CHART.appVersion} built from source`);
    expect(text).toContain(`${RECORD.ratePerFile} numbered lines/s each`);
  });

  test('one table row per adopting run, its numbers the record\'s', () => {
    const rows: Array<[Run, string]> = [
      ...runs('adopt').map((r): [Run, string] => [r, `${r.gapSeconds} s`]),
      ...runs('adopt-outage').map((r): [Run, string] => [r, `${r.gapSeconds} s, the chart's output down`]),
    ];
    for (const [run, label] of rows) {
      const running = RUNNING.map((f) => run.files[f]);
      const seconds = Math.max(...running.map((f) => f.lostSeconds ?? 0));
      const all = Object.values(run.files);
      const row = `| ${label} | ${run.sigtermToStartSeconds} s | ${spread(running.map((f) => f.lostAtTheSwitch))} `
        + `(${seconds.toFixed(1)} s × ${RECORD.ratePerFile}/s) | ${run.files.w4.lostAtTheSwitch} (its first ${run.files.w4.lostSeconds} s) `
        + `| ${spread(all.map((f) => f.duplicated))} | ${spread(all.map((f) => f.lostAtTheRestart))} |`;
      expect(text).toContain(row);
    }
    const outage = runs('adopt-outage')[0];
    expect(text).toContain(`exited when its grace ran out (${outage.sigtermToExitSeconds} s after SIGTERM)`);
    expect(text).toContain(`besides the ${outage.sigtermToStartSeconds} s from SIGTERM to the next start`);
  });

  test('the chart\'s own restart and the control, as recorded', () => {
    const chart = runs('chart').find((r) => r.gapSeconds === 2)!;
    expect(text).toContain(`lost ${spread(RUNNING.map((f) => chart.files[f].lostAtTheSwitch))} lines per file for a ${chart.sigtermToStartSeconds} s gap`);
    const control = runs('control');
    const files = control.flatMap((r) => RUNNING.map((f) => r.files[f]));
    expect(text).toContain(`(${spread(files.map((f) => f.duplicated))} per file in 8 s)`);
    expect(text).toContain(`shipped the ${spread(files.map((f) => f.beforeFirstReadShippedByTheLibrary))} lines per file written before`);
  });
});
