/**
 * Late net on every object a construct renders: run at synthesis, when the objects' JSON is final.
 * Size limits (src/agent/object-size), API rules on rendered DaemonSets (src/agent/rendered-checks),
 * a construct's own checks on its rendered DaemonSets, and any error cdk8s-plus raises while
 * rendering, all reported with the construct's kind and path.
 */
import { ApiObject } from 'cdk8s';
import { IConstruct } from 'constructs';
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
}

/**
 * Adds a validation to `construct` refusing any object below it that the API server or an apply
 * would refuse. Each object is checked once, by the outermost construct that asked (an agent
 * construct reports its NodeAgentDaemonSet's objects, under its own kind and path). Rendering every object is
 * the costly part and cdk8s validates the whole app once per chart it synthesizes, so the result
 * is computed on the first validation (at synthesis, when every escape-hatch patch is in) and kept.
 */
export function addObjectSizeValidation(construct: IConstruct, where: string, checks: RenderedObjectChecks = {}): void {
  Object.defineProperty(construct, CHECKED_HERE, { value: true });
  let result: string[] | undefined;
  construct.node.addValidation({
    validate: () => result ??= construct.node.findAll()
      .filter((c): c is ApiObject => ApiObject.isApiObject(c) && checkedBy(c) === construct)
      .flatMap((o) => {
        let json;
        try {
          json = o.toJson();
        } catch (e) {
          // cdk8s-plus' own checks (fractional seconds, duplicate ports, probes on init containers)
          // run while rendering: give them the path they lack.
          return [`${where}: ${o.kind} "${o.name}" cannot be rendered: ${(e as Error).message}`];
        }
        renderedDuringSynthesis?.set(o, json);
        reuseUntilSynthesisEnds(o, json);
        const problems = [...droppedPatches(o, json), ...checkObjectSize(json).problems, ...(json.kind === 'DaemonSet' ? checkRenderedDaemonSet(json) : [])]
          .map((p) => `${where}: ${p}`);
        if (json.kind === 'DaemonSet' && checks.daemonSet) problems.push(...checks.daemonSet(json));
        return problems;
      }),
  });
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
    const segments = op.path.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    let at: Json = json;
    for (const segment of segments) {
      if (at === null || typeof at !== 'object') return [];
      // The converter renames some fields (hostPid becomes hostPID): match the last name case-insensitively.
      const key = segment === '-' ? undefined : renderedKey(at, segment);
      if (key === undefined) {
        if (segment === '-' || Array.isArray(at)) return [];
        return [`${o.kind} "${o.name}": the JSON patch ${op.op} ${op.path} is not in the rendered object: cdk8s-plus' converter dropped its value `
          + '(an IntOrString or Quantity field takes k8s.IntOrString.fromNumber(1) / fromString("10%") or k8s.Quantity.fromString("512Mi"), not a plain value)'];
      }
      at = at[key];
    }
    const lost = lostFields(op.value, at, op.path);
    return lost.length === 0 ? [] : [`${o.kind} "${o.name}": the JSON patch ${op.op} ${op.path} lost ${lost.join(', ')} in rendering: cdk8s-plus' converter dropped `
      + 'the value (an IntOrString or Quantity field takes k8s.IntOrString.fromNumber(1) / fromString("10%") or k8s.Quantity.fromString("512Mi"), not a plain value)'];
  });
}

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
