/**
 * Late net on every object a construct renders: run at synthesis, when the objects' JSON is final.
 * Size limits (src/agent/object-size), API rules on rendered DaemonSets (src/agent/rendered-checks),
 * a construct's own checks on its rendered DaemonSets, and any error cdk8s-plus raises while
 * rendering, all reported with the construct's kind and path.
 */
import { ApiObject, JsonPatch } from 'cdk8s';
import { IConstruct } from 'constructs';
import { AgentRenderedRules, renderedAgentProblems } from './rendered-rules';
import { droppedReason } from './typed-fields';
import { nearestName } from '../util/nearest';
import { nameOf } from '../validation/errors';
import { checkObjectSize } from '../validation/object-size';
import { checkRenderedDaemonSet } from '../validation/rendered-pod';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const CHECKED_HERE = Symbol.for('cdk8s-node-agents.rendered-objects-checked');

/** The outermost construct at or above `c` that checks its rendered objects (an agent construct before its NodeAgentDaemonSet). */
function checkedBy(c: IConstruct): IConstruct | undefined {
  let found: IConstruct | undefined;
  for (let s: IConstruct | undefined = c; s; s = s.node.scope) {
    if ((s as unknown as { [CHECKED_HERE]?: boolean })[CHECKED_HERE]) found = s;
  }
  return found;
}

/** Where the late checks leave the JSON they render while a synthesis that reuses it runs. */
let renderedDuringSynthesis: Map<ApiObject, Json> | undefined;

/**
 * Runs `synthesize` with a renderer that reuses the JSON the late checks rendered for an object in
 * the same call, so a synthesis renders each object once. Only for a synthesis that validates and
 * then renders with nothing changing the objects in between; any object not rendered by a check is
 * rendered as usual.
 */
export function withRenderedObjects<T>(synthesize: (render: (o: ApiObject) => Json) => T): T {
  const outer = renderedDuringSynthesis;
  const rendered = new Map<ApiObject, Json>();
  renderedDuringSynthesis = rendered;
  try {
    return synthesize((o) => rendered.get(o) ?? o.toJson());
  } finally {
    renderedDuringSynthesis = outer;
  }
}

/**
 * Lets the rendering that follows the validation in the same synchronous run (App.synth(),
 * Testing.synth(): validate, then every chart's toJson()) reuse the JSON the late check rendered,
 * so a synthesis renders each object once, for any App. The reuse serves one rendering and ends
 * there (later ones render afresh); it stops at once if a patch is added in between, and a
 * microtask ends it if nothing rendered the object. Serving once also lets go of the JSON: a loop
 * synthesizing many apps in one synchronous run (tests, benchmarks) does not keep every app alive
 * until its microtasks run.
 */
function reuseUntilSynthesisEnds(o: ApiObject, json: Json): void {
  const own = Object.prototype.hasOwnProperty.call(o, 'toJson');
  if (own) return;
  const patches = (o as unknown as { patches?: unknown[] }).patches;
  const count = patches?.length;
  const end = endReuse(o);
  Object.defineProperty(o, 'toJson', {
    configurable: true,
    writable: true,
    value: function (this: ApiObject) {
      end();
      if (patches === undefined || patches.length !== count) return this.toJson();
      return json;
    },
  });
  queueMicrotask(end);
}

/**
 * Removes the reuse from `o`, once. Its own scope, so that the pending microtask holds only this (a
 * closure made beside the reusing toJson would share its scope, and keep the JSON alive).
 */
function endReuse(o: ApiObject): () => void {
  let pending: ApiObject | undefined = o;
  return () => {
    if (pending) delete (pending as unknown as { toJson?: unknown }).toJson;
    pending = undefined;
  };
}

/** Options of {@link addObjectSizeValidation}. */
export interface RenderedObjectChecks {
  /** The construct's own checks on each of its rendered DaemonSets, as whole messages. */
  readonly daemonSet?: (manifest: Json) => string[];
  /** What the agent kind adds to the rules every rendered DaemonSet of an agent is checked against. */
  readonly rules?: AgentRenderedRules;
}

/**
 * Adds a validation to `construct` refusing any object below it that the API server or an apply
 * would refuse. Each object is checked once, by the outermost construct that asked (an agent
 * construct reports its NodeAgentDaemonSet's objects, under its own kind and path). Rendering every object is
 * the costly part and cdk8s validates the whole app once per chart it synthesizes, so the result
 * is computed on the first validation (at synthesis, when every escape-hatch patch is in) and kept.
 */
export function addObjectSizeValidation(construct: IConstruct, checks: RenderedObjectChecks = {}): void {
  Object.defineProperty(construct, CHECKED_HERE, { value: true });
  // The library's own patches are in by now; any patch added later is the user's (an escape hatch).
  const ownPatches = new Map(construct.node.findAll().filter(ApiObject.isApiObject).map((o) => [o, patchesOf(o).length]));
  let result: string[] | undefined;
  construct.node.addValidation({
    validate: () => result ??= renderedObjectProblems(construct, checks, ownPatches),
  });
}

function renderedObjectProblems(
  construct: IConstruct, checks: RenderedObjectChecks, ownPatches: ReadonlyMap<ApiObject, number>,
): string[] {
  const name = nameOf(construct);
  const objects = construct.node.findAll().filter((c): c is ApiObject => ApiObject.isApiObject(c) && checkedBy(c) === construct);
  const rendered: Json[] = [];
  const problems = objects.flatMap((o) => {
    const patchErrors = userPatchProblems(o, ownPatches.get(o) ?? 0);
    let json;
    try {
      json = o.toJson();
    } catch (e) {
      // A patch that cannot be applied is named with its op and path; cdk8s-plus' own checks (fractional
      // seconds, duplicate ports, probes on init containers) run while rendering: give them the path they lack.
      return patchErrors.length > 0 ? patchErrors.map((p) => `${name}: ${p}`) : [`${name}: ${o.kind} "${o.name}" cannot be rendered: ${(e as Error).message}`];
    }
    renderedDuringSynthesis?.set(o, json);
    reuseUntilSynthesisEnds(o, json);
    rendered.push(json);
    const own = [...patchErrors, ...droppedPatches(o, json), ...checkObjectSize(json).problems, ...(json.kind === 'DaemonSet' ? checkRenderedDaemonSet(json) : [])]
      .map((p) => `${name}: ${p}`);
    if (json.kind === 'DaemonSet' && checks.daemonSet) own.push(...checks.daemonSet(json));
    return own;
  });
  // The agent's own rules, on every DaemonSet as written (patches included), against its Namespace as written.
  const namespace = rendered.find((j) => j.kind === 'Namespace');
  const level = namespace?.metadata?.labels?.['pod-security.kubernetes.io/enforce'];
  for (const json of rendered.filter((j) => j.kind === 'DaemonSet')) {
    problems.push(...renderedAgentProblems(json, checks.rules ?? {}, level).map((p) => `${name}: ${p}`));
  }
  return problems;
}

/** cdk8s' private list of an object's patches, read defensively. */
function patchesOf(o: ApiObject): unknown[] {
  return (o as unknown as { patches?: unknown[] }).patches ?? [];
}

interface PatchOperation {
  readonly op?: string;
  readonly path?: string;
  readonly from?: string;
  readonly value?: unknown;
}

function operationOf(patch: unknown): PatchOperation {
  return (patch as { operation?: PatchOperation }).operation ?? {};
}

/**
 * The user's patches (those after the library's own `ownCount`) replayed one by one on the object as
 * the library left it, each checked as RFC 6902 and the API server's JSON patch apply it: an `add`
 * needs its parent (cdk8s' applier throws a bare TypeError), a `remove` or `replace` its target
 * (cdk8s' applier silently removes nothing, or adds). Stops at the first failing one.
 */
function userPatchProblems(o: ApiObject, ownCount: number): string[] {
  const patches = patchesOf(o);
  if (patches.length <= ownCount) return [];
  const all = [...patches];
  let doc: Json;
  try {
    patches.splice(ownCount);
    doc = ApiObject.prototype.toJson.call(o);
  } catch {
    return [];
  } finally {
    patches.splice(0, patches.length, ...all);
  }
  for (const patch of all.slice(ownCount)) {
    const op = operationOf(patch);
    const problem = patchPrecondition(doc, op);
    const name = `${o.kind} "${o.name}": the JSON patch ${op.op} ${op.path}${op.from !== undefined ? ` (from ${op.from})` : ''}`;
    if (problem) return [`${name} ${problem}`];
    try {
      doc = JsonPatch.apply(doc, patch as JsonPatch);
    } catch (e) {
      return [`${name} cannot be applied: ${String((e as Error).message).split('\n')[0]}`];
    }
  }
  return [];
}

/** Why `op` cannot apply to `doc`, with the fix; undefined when it can. */
function patchPrecondition(doc: Json, op: PatchOperation): string | undefined {
  if (typeof op.path !== 'string' || (op.path !== '' && !op.path.startsWith('/'))) return 'has no JSON pointer path (one starting with "/"); give the path, e.g. "/spec/template/spec/hostNetwork"';
  const segments = pointerSegments(op.path);
  const parent = resolvePointer(doc, segments.slice(0, -1));
  const last = segments[segments.length - 1];
  const parentPath = `/${segments.slice(0, -1).map(escapeSegment).join('/')}`;
  const missing = (what: string, at: Json, segment: string) => {
    const keys = at !== null && typeof at === 'object' && !Array.isArray(at) ? Object.keys(at) : [];
    const nearest = nearestName(segment, keys);
    return `${what}${nearest ? ` (did you mean "${nearest}"?)` : ''}; correct the path${op.op === 'add' ? ', or add the parent first with its whole value' : ''}`;
  };
  if (op.from !== undefined && resolvePointer(doc, pointerSegments(op.from)) === undefined) return missing(`reads ${op.from}, which does not exist`, doc, op.from);
  if (parent === undefined || parent === null || typeof parent !== 'object') {
    const firstMissing = firstMissingSegment(doc, segments);
    return missing(`needs ${firstMissing.path}, which does not exist${parent !== undefined && parent !== null ? ' as an object' : ''}`, firstMissing.at, firstMissing.segment);
  }
  if (op.op === 'add' || op.op === 'move' || op.op === 'copy') {
    if (Array.isArray(parent) && last !== '-' && !(/^(0|[1-9][0-9]*)$/.test(last) && Number(last) <= parent.length)) {
      return `inserts at index ${last} of ${parentPath}, which has ${parent.length} item(s); use an index up to ${parent.length}, or "-" to append`;
    }
    return undefined;
  }
  if (op.op === 'remove' || op.op === 'replace' || op.op === 'test') {
    const exists = Array.isArray(parent) ? /^(0|[1-9][0-9]*)$/.test(last) && Number(last) < parent.length : Object.prototype.hasOwnProperty.call(parent, last);
    if (!exists) return missing(`targets ${op.path}, which does not exist, so it ${op.op === 'remove' ? 'would remove nothing' : op.op === 'replace' ? 'would add a field instead' : 'fails'}`, parent, last);
  }
  return undefined;
}

function pointerSegments(path: string): string[] {
  return path === '' ? [] : path.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function escapeSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function resolvePointer(doc: Json, segments: readonly string[]): Json {
  let at: Json = doc;
  for (const segment of segments) {
    if (at === null || typeof at !== 'object' || !Object.prototype.hasOwnProperty.call(at, segment)) return undefined;
    at = at[segment];
  }
  return at;
}

/** The first segment of `segments` that `doc` lacks, with the path up to it and the object it is missing from. */
function firstMissingSegment(doc: Json, segments: readonly string[]): { path: string; segment: string; at: Json } {
  let at: Json = doc;
  for (let i = 0; i < segments.length; i++) {
    if (at === null || typeof at !== 'object' || !Object.prototype.hasOwnProperty.call(at, segments[i])) {
      return { path: `/${segments.slice(0, i + 1).map(escapeSegment).join('/')}`, segment: segments[i], at };
    }
    at = at[segments[i]];
  }
  return { path: `/${segments.map(escapeSegment).join('/')}`, segment: segments[segments.length - 1] ?? '', at };
}

/**
 * The JSON patches whose value is not in the rendered object. cdk8s-plus' typed objects apply the
 * patches before their converter, which reads IntOrString and Quantity fields as typed values: a
 * plain `1` for `maxSurge` or `'lots'` for a memory limit is dropped without a word (`rollingUpdate: {}`).
 * The patches are cdk8s' private state (ApiObject.patches, JsonPatch.operation), read defensively.
 */
function droppedPatches(o: ApiObject, json: Json): string[] {
  const patches = (o as unknown as { patches?: unknown[] }).patches ?? [];
  return patches.flatMap((patch) => {
    const op = (patch as { operation?: { op?: string; path?: string; value?: unknown } }).operation;
    if (!op || (op.op !== 'add' && op.op !== 'replace') || typeof op.path !== 'string' || op.value === undefined) return [];
    const segments = pointerSegments(op.path);
    let at: Json = json;
    for (const segment of segments) {
      if (at === null || typeof at !== 'object') return [];
      // The converter renames some fields (hostPid becomes hostPID): match the last name case-insensitively.
      const key = segment === '-' ? undefined : renderedKey(at, segment);
      if (key === undefined) {
        if (segment === '-' || Array.isArray(at)) return [];
        const reason = droppedReason(o.kind, segments) ?? GENERIC_DROP;
        return [`${o.kind} "${o.name}": the JSON patch ${op.op} ${op.path} is not in the rendered object: ${reason}`];
      }
      at = at[key];
    }
    const lost = lostFields(op.value, at, op.path);
    return lost.map((path) => `${o.kind} "${o.name}": the JSON patch ${op.op} ${op.path} lost ${path} in rendering: `
      + `${droppedReason(o.kind, pointerSegments(path)) ?? GENERIC_DROP}`);
  });
}

/** Why a value is dropped when the path tells nothing more. */
const GENERIC_DROP = 'cdk8s-plus\' converter dropped its value (it keeps only the type\'s fields, and reads an IntOrString or Quantity field as a typed value: '
  + 'k8s.IntOrString.fromNumber(1) / fromString("10%") or k8s.Quantity.fromString("512Mi"), not a plain value)';

/** The member of `rendered` named `name` that has a value (the converter writes a dropped one as undefined). */
function renderedKey(rendered: Json, name: string): string | undefined {
  if (Object.prototype.hasOwnProperty.call(rendered, name) && rendered[name] !== undefined) return name;
  const lower = name.toLowerCase();
  return Object.keys(rendered).find((k) => rendered[k] !== undefined && k.toLowerCase() === lower);
}

/** The paths of `value`'s object members that `rendered` lacks. */
function lostFields(value: unknown, rendered: Json, path: string): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || rendered === null || typeof rendered !== 'object') return [];
  return Object.entries(value as { [k: string]: unknown }).flatMap(([k, v]) => {
    if (v === undefined) return [];
    const key = renderedKey(rendered, k);
    return key === undefined ? [`${path}/${k}`] : lostFields(v, rendered[key], `${path}/${k}`);
  });
}
