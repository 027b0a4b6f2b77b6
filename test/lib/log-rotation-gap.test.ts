/**
 * A rotation while the collector is stopped (a rolling update, a restart), on the kubelet's real
 * layout: /var/log/pods/<namespace>_<pod>_<uid>/<container>/0.log written by the runtime, and the
 * symlink /var/log/containers/<pod>_<namespace>_<container>-<container id>.log to it. The kubelet
 * rotates by renaming 0.log to 0.log.<YYYYMMDD-hhmmss> and having the runtime reopen a new 0.log
 * (pkg/kubelet/logs/container_log_manager.go, rotateLatestLog; the older rotated files are
 * gzipped by compressLog, so one generation stays uncompressed).
 *
 * What the restarted collector reads follows fluent-bit 5.1.1's in_tail at start:
 * - plugins/in_tail/tail.c in_tail_init → tail_scan_glob.c flb_tail_scan: glob(3) of each Path,
 *   stat(2) of each match (a symlink is followed), fnmatch(3) against each Exclude_Path;
 * - tail_file.c flb_tail_file_append → tail_db.c flb_tail_db_file_set / db_file_exists: the DB row
 *   is found by inode alone (`db.compare_filename` off): a known inode resumes at its offset, an
 *   unknown one starts at the head with Read_from_Head On (tail_file.c set_file_position);
 * - tail_db.c flb_tail_db_stale_file_delete: every row whose inode no matched file has is deleted.
 *
 * Real files, renames and inodes in a temporary directory; the Path and Exclude_Path globs are the
 * rendered ConfigMap's, under that directory. Running fluent-bit itself is outside the suite (its
 * measured figures are in the README).
 */
import * as fs from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import { LogCollectorDaemonSet } from '../../src/constructs/log-collector-daemon-set';
import { entryValue, findSections, parseClassicConfig } from '../../src/fluent-bit/classic-format';
import { FluentBitOutput } from '../../src/fluent-bit/outputs';
import { synthManifests } from '../util/manifests';
import { REPO } from '../util/paths';

/** The rendered container-log tail input. */
function tailInput(): { path: string[]; exclude: string[]; readFromHead: boolean } {
  const chart = new Chart(Testing.app(), 'test');
  new LogCollectorDaemonSet(chart, 'logs', {
    name: 'log-collector',
    outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' })],
    excludeNamespaces: ['kube-system'],
  });
  const cm = synthManifests(chart).find((m) => m.kind === 'ConfigMap' && m.data['fluent-bit.conf'])!;
  const [tail] = findSections(parseClassicConfig(cm.data['fluent-bit.conf']), 'INPUT', 'tail');
  return {
    path: entryValue(tail, 'Path')!.split(','),
    exclude: entryValue(tail, 'Exclude_Path')!.split(','),
    readFromHead: entryValue(tail, 'Read_from_Head') === 'On',
  };
}

/** fnmatch(3) without flags for the patterns the config uses (`*` and `?`, which also match `/`), as a RegExp. */
function fnmatch(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('').map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&'))).join('')}$`);
}

/** glob(3) of an absolute pattern under `root`: `*` within one path component, no hidden entries. */
function glob(root: string, pattern: string): string[] {
  let found = [''];
  for (const part of pattern.split('/').filter((p) => p !== '')) {
    const re = new RegExp(`^${part.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')}$`);
    found = found.flatMap((dir) => {
      const full = path.join(root, dir);
      if (!part.includes('*')) return fs.existsSync(path.join(full, part)) || isLink(path.join(full, part)) ? [`${dir}/${part}`] : [];
      if (!fs.existsSync(full) || !fs.statSync(full).isDirectory()) return [];
      return fs.readdirSync(full).filter((n) => !n.startsWith('.') && re.test(n)).sort().map((n) => `${dir}/${n}`);
    });
  }
  return found;
}

function isLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The tail DB: one row per file, found by inode. */
type TailDb = Map<number, { name: string; offset: number }>;

/** What in_tail does at start: the files it tails (path as globbed, inode) from which byte; the DB after its stale-row cleanup. */
function startCollector(root: string, input: ReturnType<typeof tailInput>, db: TailDb): Array<{ file: string; inode: number; from: number }> {
  const tailed: Array<{ file: string; inode: number; from: number }> = [];
  for (const pattern of input.path) {
    for (const file of glob(root, pattern)) {
      if (input.exclude.some((x) => fnmatch(x).test(file))) continue;
      const st = fs.statSync(path.join(root, file)); // follows the symlink
      if (!st.isFile() || tailed.some((t) => t.inode === st.ino)) continue;
      const row = db.get(st.ino);
      const from = row ? row.offset : input.readFromHead ? 0 : st.size;
      tailed.push({ file, inode: st.ino, from });
      db.set(st.ino, { name: file, offset: from });
    }
  }
  for (const inode of [...db.keys()]) if (!tailed.some((t) => t.inode === inode)) db.delete(inode);
  return tailed;
}

/** Reads every tailed file to its end: the lines shipped; the DB offsets advance. */
function readAll(root: string, tailed: Array<{ file: string; inode: number; from: number }>, db: TailDb): string[] {
  return tailed.flatMap((t) => {
    const text = fs.readFileSync(path.join(root, t.file), 'utf8');
    db.set(t.inode, { name: t.file, offset: Buffer.byteLength(text) });
    return Buffer.from(text).subarray(t.from).toString('utf8').split('\n').filter((l) => l !== '');
  });
}

interface Container {
  readonly namespace: string;
  readonly pod: string;
  readonly name: string;
  /** /var/log/pods/<namespace>_<pod>_<uid>/<container> */
  readonly dir: string;
}

/** The kubelet's layout for one container, and its writer: CRI-format lines numbered per container. */
class Node {
  public readonly root = fs.mkdtempSync(path.join(tmpdir(), 'kubelet-layout-'));
  private readonly seq = new Map<string, number>();
  /** The file the runtime has open per container: 0.log, or the renamed file until it reopens. */
  private readonly open = new Map<string, string>();

  public container(namespace: string, pod: string, name: string, id: string): Container {
    const uid = `0000000${this.seq.size}-aaaa-bbbb-cccc-dddddddddddd`;
    const dir = `/var/log/pods/${namespace}_${pod}_${uid}/${name}`;
    fs.mkdirSync(path.join(this.root, dir), { recursive: true });
    fs.mkdirSync(path.join(this.root, '/var/log/containers'), { recursive: true });
    fs.writeFileSync(path.join(this.root, dir, '0.log'), '');
    // The kubelet's symlink holds the absolute host path; here, the same path under the root.
    fs.symlinkSync(path.join(this.root, dir, '0.log'), path.join(this.root, `/var/log/containers/${pod}_${namespace}_${name}-${id}.log`));
    this.seq.set(dir, 0);
    return { namespace, pod, name, dir };
  }

  /** Appends `n` numbered lines; returns them. */
  public write(c: Container, n: number): string[] {
    const lines: string[] = [];
    for (let i = 0; i < n; i++) {
      const s = this.seq.get(c.dir)! + 1;
      this.seq.set(c.dir, s);
      lines.push(`2025-06-01T12:00:00.000000000Z stdout F ${c.pod} line ${s}`);
    }
    fs.appendFileSync(path.join(this.root, c.dir, this.open.get(c.dir) ?? '0.log'), lines.map((l) => `${l}\n`).join(''));
    return lines;
  }

  /** The kubelet's rotation: 0.log renamed to 0.log.<timestamp>, the runtime reopens a new 0.log. */
  public rotate(c: Container, stamp = '20250601-120005'): void {
    this.rename(c, stamp);
    this.reopen(c);
  }

  /** rotateLatestLog's first step, os.Rename: the runtime's open descriptor now writes into 0.log.<timestamp>. */
  public rename(c: Container, stamp = '20250601-120005'): void {
    fs.renameSync(path.join(this.root, c.dir, '0.log'), path.join(this.root, c.dir, `0.log.${stamp}`));
    this.open.set(c.dir, `0.log.${stamp}`);
  }

  /** Its second, ReopenContainerLog: the runtime opens a new 0.log and writes there. */
  public reopen(c: Container): void {
    fs.writeFileSync(path.join(this.root, c.dir, '0.log'), '');
    this.open.set(c.dir, '0.log');
  }

  public remove(): void {
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

const ID = 'a'.repeat(64);

describe('a rename rotation while the collector is stopped (kubelet layout, rendered tail input)', () => {
  let node: Node;
  beforeEach(() => {
    node = new Node();
  });
  afterEach(() => node.remove());

  test('the rendered input reads /var/log/containers/*.log only: a rotated 0.log.<timestamp> matches no Path', () => {
    const input = tailInput();
    expect(input.path).toEqual(['/var/log/containers/*.log']);
    const app = node.container('shop', 'web-7d9f8-x2x4z', 'app', ID);
    node.write(app, 3);
    node.rotate(app);
    expect(input.path.flatMap((p) => glob(node.root, p))).toEqual([`/var/log/containers/web-7d9f8-x2x4z_shop_app-${ID}.log`]);
    expect(fs.readdirSync(path.join(node.root, app.dir)).sort()).toEqual(['0.log', '0.log.20250601-120005']);
  });

  test('SIGTERM → lines written → rotation → lines written → restart: exactly the lines between SIGTERM and the rotation are lost', () => {
    const input = tailInput();
    const db: TailDb = new Map();
    const app = node.container('shop', 'web-7d9f8-x2x4z', 'app', ID);
    const other = node.container('shop', 'api-5c6b7-p9q8r', 'api', 'b'.repeat(64));
    const before = [...node.write(app, 400), ...node.write(other, 400)];
    const shipped = readAll(node.root, startCollector(node.root, input, db), db);
    expect(new Set(shipped)).toEqual(new Set(before));

    // SIGTERM: the collector stops reading; 113 lines (2.26 s at 50 lines/s) reach each file, then the kubelet rotates `app`.
    const lostApp = node.write(app, 113);
    const keptOther = node.write(other, 113);
    node.rotate(app);
    const afterRotation = [...node.write(app, 50), ...node.write(other, 50)];

    // The restart: the symlink leads to the new 0.log (a new inode: read from its head); the
    // rotated file's inode, whose row holds the offset, matches no Path, and its row is dropped.
    const tailed = startCollector(node.root, input, db);
    expect(tailed.map((t) => t.file).sort()).toEqual([
      `/var/log/containers/api-5c6b7-p9q8r_shop_api-${'b'.repeat(64)}.log`, `/var/log/containers/web-7d9f8-x2x4z_shop_app-${ID}.log`,
    ]);
    const resumed = readAll(node.root, tailed, db);
    expect(new Set(resumed)).toEqual(new Set([...keptOther, ...afterRotation]));
    expect(resumed).toHaveLength(new Set(resumed).size); // nothing twice
    const lost = [...before, ...lostApp, ...keptOther, ...afterRotation].filter((l) => !shipped.includes(l) && !resumed.includes(l));
    expect(lost).toEqual(lostApp);
    expect(lost).toHaveLength(113);
    expect(db.size).toBe(2);
  });

  // pkg/kubelet/logs/container_log_manager.go, rotateLatestLog: os.Rename(log, rotated), then
  // runtime.ReopenContainerLog; until the runtime reopens, what the container writes goes into the
  // renamed file, which no Path matches.
  test('lines the runtime writes into the renamed file before it reopens 0.log are lost too', () => {
    const input = tailInput();
    const db: TailDb = new Map();
    const app = node.container('shop', 'web-7d9f8-x2x4z', 'app', ID);
    const shipped = readAll(node.root, startCollector(node.root, input, db), db);
    expect(shipped).toEqual([]);
    const beforeRename = node.write(app, 20); // SIGTERM, then 20 lines
    node.rename(app);
    const intoRenamed = node.write(app, 7); // the runtime's descriptor still points at the renamed file
    node.reopen(app);
    const afterReopen = node.write(app, 10);
    const resumed = readAll(node.root, startCollector(node.root, input, db), db);
    expect(resumed).toEqual(afterReopen);
    expect(fs.readFileSync(path.join(node.root, app.dir, '0.log.20250601-120005'), 'utf8').trim().split('\n'))
      .toEqual([...beforeRename, ...intoRenamed]);
  });

  test('without a rotation in the gap nothing is lost: the same inode resumes at its offset', () => {
    const input = tailInput();
    const db: TailDb = new Map();
    const app = node.container('shop', 'web-7d9f8-x2x4z', 'app', ID);
    readAll(node.root, startCollector(node.root, input, db), db);
    const first = node.write(app, 10);
    expect(readAll(node.root, startCollector(node.root, input, db), db)).toEqual(first);
    const gap = node.write(app, 113);
    expect(readAll(node.root, startCollector(node.root, input, db), db)).toEqual(gap);
  });

  test('a file rotated while the collector ran is not read again after a restart (no duplicates from the rotated generation)', () => {
    const input = tailInput();
    const db: TailDb = new Map();
    const app = node.container('shop', 'web-7d9f8-x2x4z', 'app', ID);
    const first = node.write(app, 200);
    expect(readAll(node.root, startCollector(node.root, input, db), db)).toEqual(first);
    // in_tail follows the renamed inode to its end while it runs (tail_file.c flb_tail_file_rotated),
    // then, Rotate_Wait later, drops it and its DB row (flb_tail_file_purge → flb_tail_file_remove)
    const rotated = fs.statSync(path.join(node.root, app.dir, '0.log')).ino;
    node.rotate(app);
    db.delete(rotated);
    const second = node.write(app, 20);
    expect(readAll(node.root, startCollector(node.root, input, db), db)).toEqual(second);
    expect(readAll(node.root, startCollector(node.root, input, db), db)).toEqual([]);
  });

  test('excluded namespaces and the collector\'s own pods stay excluded in the kubelet layout', () => {
    const input = tailInput();
    const db: TailDb = new Map();
    const sys = node.container('kube-system', 'coredns-5d78c-abcde', 'coredns', 'c'.repeat(64));
    const own = node.container('observability', 'log-collector-k2x9p', 'fluent-bit', 'd'.repeat(64));
    node.write(sys, 5);
    node.write(own, 5);
    expect(startCollector(node.root, input, db)).toEqual([]);
  });
});

test('the log collector guide states the loss of a rotation during a restart gap, as measured', () => {
  const readme = fs.readFileSync(path.join(REPO, 'docs', 'log-collector.md'), 'utf8');
  expect(readme).toMatch(/rotat\w+ while the collector is stopped/i);
  expect(readme).toContain('0.log.<timestamp>');
  expect(readme).toMatch(/until the runtime reopens/);
});
