/**
 * A log collector with two destinations: one that is down or refusing must not stop the other.
 *
 * fluent-bit 5.1.1 keeps a chunk routed to two outputs in memory while either retries it
 * (src/flb_task.c, flb_task_retry_create: a retried chunk goes down to the filesystem when its task
 * has one route, or when its input is over Mem_Buf_Limit and one user is left; src/flb_input_chunk.c,
 * flb_input_chunk_set_up_down), and flushes a new chunk only once it can be brought up, which fails
 * at storage.max_chunks_up (flb_input_chunk_flush; src/flb_engine_dispatch.c, flb_engine_dispatch).
 * So the collector writes Mem_Buf_Limit 8K on its file inputs when it has two outputs, and alerts on
 * an output starved by the other.
 *
 * The recordings (test/fixtures/fluent-bit-delivery/two-destinations-*.json) are fluent-bit 5.1.1 built
 * from source running the rollout example's canary config (Loki plus Elasticsearch), its
 * /api/v2/metrics/prometheus every 5 s, while one destination refused (401) or was down for about
 * 7 minutes (both directions): without the put-down the healthy destination got nothing once 64 chunks
 * were up; with it, it kept pace. The alerts are evaluated over them by the real promtool.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import { FluentBitOutput, LogCollectorDaemonSet, LogCollectorDaemonSetProps, ResourceProfileNodes } from '../../src';
import { entryValue, findSections, parseClassicConfig } from '../../src/fluent-bit/classic-format';
import { RETRY_PUT_DOWN_LIMIT } from '../../src/fluent-bit/config';
import { warningsOf } from '../../src/validation/warnings';
import { Manifest, synthManifests } from '../util/manifests';
import { FIXTURES, REPO } from '../util/paths';
import { describeWithBinaries, promtool, PROMTOOL, recordedInput, ruleFile } from '../util/prometheus-tools';

const NS = 'observability';
const POD = { job: 'logs', namespace: NS, pod: 'logs-x7k2p', node: 'node-1' };
const LOKI = FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc', alias: 'loki' });
const ES = FluentBitOutput.elasticsearch({ host: 'es-http.logging.svc', alias: 'es' });

function collector(props: Partial<LogCollectorDaemonSetProps> = {}): { manifests: Manifest[]; collector: LogCollectorDaemonSet } {
  const chart = new Chart(Testing.app(), 'test', { namespace: NS });
  const c = new LogCollectorDaemonSet(chart, 'logs', { name: 'logs', outputs: [LOKI, ES], alerts: {}, ...props });
  return { manifests: synthManifests(chart), collector: c };
}

const rulesNamed = (manifests: Manifest[], alert: string) =>
  ruleFile(manifests).groups.flatMap((g) => g.rules).filter((r: Manifest) => r.alert === alert);

describe('the retry put-down', () => {
  test('two outputs: the container-log input carries Mem_Buf_Limit 8K; one output: nothing changes', () => {
    const tail = (m: Manifest[]) => findSections(parseClassicConfig(m.find((x) => x.kind === 'ConfigMap')!.data['fluent-bit.conf']), 'INPUT', 'tail')[0];
    expect(entryValue(tail(collector().manifests), 'Mem_Buf_Limit')).toBe(RETRY_PUT_DOWN_LIMIT);
    expect(entryValue(tail(collector({ outputs: [LOKI] }).manifests), 'Mem_Buf_Limit')).toBeUndefined();
  });

  test('the rollout example\'s canary (Loki and Elasticsearch) renders the put-down the recordings ran with', () => {
    const file = path.join(REPO, 'examples', 'log-collector-rollout', 'dist', '1-canary', 'log-collector.k8s.yaml');
    expect(fs.readFileSync(file, 'utf8')).toMatch(/\n +Mem_Buf_Limit +8K\n/);
    for (const name of ['es-401', 'es-down', 'loki-401', 'loki-down'].map((c) => `two-destinations-${c}-put-down.json`)) {
      expect(JSON.parse(fs.readFileSync(path.join(FIXTURES, 'fluent-bit-delivery', name), 'utf8')).memBufLimit).toBe(RETRY_PUT_DOWN_LIMIT);
    }
  });

  test('a memBufLimit above it with two outputs is written, with a warning naming the starvation and the fix', () => {
    const big = collector({ memBufLimit: '20MB' }).collector;
    expect(warningsOf(big)).toEqual([expect.stringMatching(/memBufLimit "20MB" with 2 outputs: .*starve the others\. Remove memBufLimit \(the collector then writes Mem_Buf_Limit 8K/)]);
    expect(warningsOf(collector({ memBufLimit: '8K' }).collector)).toEqual([]);
    expect(warningsOf(collector({ memBufLimit: '20MB', outputs: [LOKI] }).collector)).toEqual([]);
  });
});

test('complete isolation: two collectors with different names, each with its own state directory, tail DB and buffer', () => {
  const chart = new Chart(Testing.app(), 'test', { namespace: NS });
  new LogCollectorDaemonSet(chart, 'live', { name: 'logs-live', outputs: [LOKI] });
  new LogCollectorDaemonSet(chart, 'archive', { name: 'logs-archive', outputs: [FluentBitOutput.s3({ bucket: 'log-archive', region: 'eu-west-1' })] });
  const manifests = synthManifests(chart);
  const configs = manifests.filter((m) => m.kind === 'ConfigMap' && m.data?.['fluent-bit.conf']).map((m) => parseClassicConfig(m.data['fluent-bit.conf']));
  expect(configs).toHaveLength(2);
  const state = configs.map((c) => [entryValue(findSections(c, 'SERVICE')[0], 'storage.path'), entryValue(findSections(c, 'INPUT', 'tail')[0], 'DB')]);
  expect(state).toEqual([
    ['/var/lib/logs-live/flb-storage/', '/var/lib/logs-live/tail-containers.db'],
    ['/var/lib/logs-archive/flb-storage/', '/var/lib/logs-archive/tail-containers.db'],
  ]);
  // one output each: no put-down needed, no starvation alert
  for (const c of configs) expect(entryValue(findSections(c, 'INPUT', 'tail')[0], 'Mem_Buf_Limit')).toBeUndefined();
  const hostPaths = manifests.filter((m) => m.kind === 'DaemonSet').map((d) => d.spec.template.spec.volumes.find((v: Manifest) => v.name === 'state').hostPath.path);
  expect(hostPaths).toEqual(['/var/lib/logs-live', '/var/lib/logs-archive']);
});

describe('LogCollectorOutputStarved', () => {
  test('rendered with two outputs, at the lowest storage.max_chunks_up of the collector and its profiles; not with one', () => {
    const [rule] = rulesNamed(collector().manifests, 'LogCollectorOutputStarved');
    expect(rule.for).toBe('10m');
    expect(rule.expr).toMatch(/ and on \(namespace, pod\) sum by \(namespace, pod\) \(fluentbit_input_storage_chunks_up\{.*\}\) >= 64$/);
    expect(rule.annotations.description).toContain('held 64 chunks in memory');
    const profiled = collector({
      storageMaxChunksUp: 96,
      resourceProfiles: [{ name: 'small', nodes: ResourceProfileNodes.nodePools(['small']), storageMaxChunksUp: 32 }],
    }).manifests;
    expect(rulesNamed(profiled, 'LogCollectorOutputStarved')[0].expr).toMatch(/>= 32$/);
    expect(rulesNamed(collector({ storageMaxChunksUp: 96 }).manifests, 'LogCollectorOutputStarved')[0].expr).toMatch(/>= 96$/);
    expect(rulesNamed(collector({ outputs: [LOKI] }).manifests, 'LogCollectorOutputStarved')).toEqual([]);
  });
});

interface Recording {
  readonly case: string;
  readonly memBufLimit: string | null;
  readonly intervalSeconds: number;
  readonly faultFromSample: number;
  readonly recoveredAfterSample: number;
  readonly delivered: { written: number; loki: number; es: number; duplicates: { loki: number; es: number } };
  readonly series: Record<string, Array<number | null>>;
}

const recording = (name: string): Recording =>
  JSON.parse(fs.readFileSync(path.join(FIXTURES, 'fluent-bit-delivery', `two-destinations-${name}.json`), 'utf8'));

/** Records the output delivered between two samples. */
const deliveredBetween = (rec: Recording, output: string, from: number, to: number) => {
  const s = rec.series[`fluentbit_output_proc_records_total{name="${output}"}`];
  return (s[to] ?? 0) - (s[from] ?? 0);
};

// Both directions, refusal and outage; the recordings without the put-down exist for one of each.
const CASES = [
  { name: 'es-401', faulty: 'es', healthy: 'loki', recordedBefore: true },
  { name: 'es-down', faulty: 'es', healthy: 'loki', recordedBefore: false },
  { name: 'loki-401', faulty: 'loki', healthy: 'es', recordedBefore: false },
  { name: 'loki-down', faulty: 'loki', healthy: 'es', recordedBefore: true },
];

describe.each(CASES)('recorded: $name, the other destination healthy', ({ name, faulty, healthy, recordedBefore }) => {
  const before = recordedBefore ? recording(name) : undefined;
  const after = recording(`${name}-put-down`);

  if (before) {
    test('without the put-down the healthy destination starves within 25 s, for the rest of the fault', () => {
      const b = before;
      expect(b.memBufLimit).toBeNull();
      const starvedFrom = b.faultFromSample + 25 / b.intervalSeconds;
      expect(deliveredBetween(b, healthy, starvedFrom, b.recoveredAfterSample)).toBe(0);
      expect(b.delivered[healthy as 'loki' | 'es']).toBe(b.delivered.written);
    });
  }

  test('with it the healthy destination delivers between every two scrapes of the fault; both get every line once', () => {
    expect(after.memBufLimit).toBe(RETRY_PUT_DOWN_LIMIT);
    for (let s = after.faultFromSample; s < after.recoveredAfterSample; s++) {
      expect({ sample: s, delivered: deliveredBetween(after, healthy, s, s + 1) > 0 }).toEqual({ sample: s, delivered: true });
    }
    expect(deliveredBetween(after, faulty, after.faultFromSample + 1, after.recoveredAfterSample)).toBe(0);
    expect(after.delivered.loki).toBe(after.delivered.written);
    expect(after.delivered.es).toBe(after.delivered.written);
    expect(after.delivered.duplicates).toEqual({ loki: 0, es: 0 });
  });

  test('the failing destination has every line within 65 s of its return, as the guide says', () => {
    const delivered = after.series[`fluentbit_output_proc_records_total{name="${faulty}"}`] as number[];
    const complete = delivered.findIndex((v, i) => i > after.recoveredAfterSample && v === after.delivered.written);
    expect((complete - after.recoveredAfterSample) * after.intervalSeconds).toBeLessThanOrEqual(65);
    // the guide's figure comes from the stand-ins' clocks, within the scrape interval of this one
    expect(fs.readFileSync(path.join(REPO, 'docs', 'log-collector.md'), 'utf8')).toContain('its last line arrived 59 to 63 s after it was back');
  });

  describeWithBinaries(`the alerts over the recordings (${PROMTOOL})`, [PROMTOOL], () => {
    function rules(): { groups: Manifest[] } {
      const file = ruleFile(collector({ alerts: { outputStarvedFor: '1m', outputStalledFor: '1m' } }).manifests);
      for (const group of file.groups) for (const rule of group.rules) delete rule.annotations;
      return file;
    }
    const firing = (seconds: number, alert: string, outputs: string[]) => ({
      alertname: alert,
      eval_time: `${seconds}s`,
      exp_alerts: outputs.map((o) => ({
        exp_labels: { namespace: NS, pod: POD.pod, node: POD.node, name: o, node_agent: 'logs', severity: 'warning' },
      })),
    });

    test.each([
      ['without the put-down: LogCollectorOutputStarved names the healthy destination', false],
      ['with it: silent', true],
    ].filter(([, putDown]) => putDown || before !== undefined))('%s', (_, putDown) => {
      const rec = putDown ? after : before!;
      const step = rec.intervalSeconds;
      const end = rec.recoveredAfterSample * step;
      const tests = {
        rule_files: ['rules.yaml'],
        evaluation_interval: `${step}s`,
        tests: [{
          interval: `${step}s`,
          input_series: recordedInput(rec.series, POD),
          alert_rule_test: [
            firing(end, 'LogCollectorOutputStarved', putDown ? [] : [healthy]),
            firing(end, 'LogCollectorOutputStalled', [faulty]),
            // before the fault: nothing
            firing(rec.faultFromSample * step, 'LogCollectorOutputStarved', []),
          ],
        }],
      };
      const run = promtool(['test', 'rules', 'tests.yaml'], { 'rules.yaml': rules(), 'tests.yaml': tests });
      if (run.status !== 0) throw new Error(`promtool test rules failed:\n${run.output}`);
    });
  });
});
