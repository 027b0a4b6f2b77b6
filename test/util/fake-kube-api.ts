/**
 * A stand-in for the API server's node and pod endpoints the readiness taint remover calls, run in the test process
 * on 127.0.0.1. It does what the API server does with those requests:
 * - authentication: a bearer token names a user and its extra (a pod-bound ServiceAccount token carries
 *   `authentication.kubernetes.io/node-name`, as pkg/serviceaccount/claims.go puts it since 1.30);
 * - authorization: the rendered RBAC rules of the agent (verb, resource, namespace of a Role);
 * - PATCH with `application/json-patch+json` applied to the object as stored (RFC 6902: add, remove, replace, test;
 *   a failed op changes nothing and answers 422, as apimachinery's jsonpatch handling does);
 * - admission: the rendered ValidatingAdmissionPolicies whose match condition holds, their CEL validations
 *   evaluated with a CEL evaluator on `object`, `oldObject` and `request`; a false one denies (403) with the
 *   API server's message shape (staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating).
 * Every request is recorded with its body.
 */
import * as http from 'http';
import { CelInput, run } from '@bufbuild/cel';
import { Loopback, serveLoopback } from './loopback';
import { Manifest } from './manifests';

export interface UserInfo {
  readonly username: string;
  readonly extra?: Record<string, string[]>;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** the query string, without "?" */
  readonly query: string;
  readonly contentType?: string;
  readonly body: string;
  readonly code: number;
}

/** JSON to the values CEL takes: objects as Maps, whole numbers as ints. */
export function toCel(value: unknown): CelInput {
  if (Array.isArray(value)) return value.map(toCel) as CelInput;
  if (value !== null && typeof value === 'object') return new Map(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  return value as CelInput;
}

/** The first policy validation (of the policies matching the request's user) that fails, or undefined. */
export function admissionDenial(policies: readonly Manifest[], request: { userInfo: UserInfo },
  object: unknown, oldObject: unknown): string | undefined {
  // the user's extra as the request carries it: absent when the user has none
  const vars = { object: toCel(object), oldObject: toCel(oldObject), request: toCel(request) };
  for (const policy of policies) {
    const matches = (policy.spec.matchConditions ?? []).every((c: Manifest) => run(c.expression, vars) === true);
    if (!matches) continue;
    for (const v of policy.spec.validations) {
      if (run(v.expression, vars) !== true) {
        return `ValidatingAdmissionPolicy '${policy.metadata.name}' with binding '${policy.metadata.name}' denied request: ${v.message}`;
      }
    }
  }
  return undefined;
}

/** RFC 6901 pointer segments. */
function segments(pointer: string): string[] {
  return pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** RFC 6902 on a copy; throws on a failed op (the caller answers 422 and keeps the original). */
export function applyJsonPatch(doc: unknown, ops: Manifest[]): unknown {
  const copy = JSON.parse(JSON.stringify(doc));
  for (const op of ops) {
    const path = segments(op.path);
    const last = path.pop()!;
    let parent: any = copy;
    for (const s of path) {
      if (parent === null || typeof parent !== 'object' || !(s in parent)) throw new Error(`path ${op.path} does not exist`);
      parent = parent[s];
    }
    const isArray = Array.isArray(parent);
    const index = isArray ? (last === '-' ? parent.length : Number(last)) : -1;
    if (isArray && (!Number.isInteger(index) || index < 0 || index > parent.length)) throw new Error(`index ${last} out of range`);
    switch (op.op) {
      case 'test':
        if (JSON.stringify(isArray ? parent[index] : parent[last]) !== JSON.stringify(op.value)) throw new Error(`test failed at ${op.path}`);
        break;
      case 'remove':
        if (isArray ? index >= parent.length : !(last in parent)) throw new Error(`nothing to remove at ${op.path}`);
        if (isArray) parent.splice(index, 1); else delete parent[last];
        break;
      case 'add':
        if (isArray) parent.splice(index, 0, op.value); else parent[last] = op.value;
        break;
      case 'replace':
        if (isArray) parent[index] = op.value; else parent[last] = op.value;
        break;
      default:
        throw new Error(`op ${op.op} not supported here`);
    }
  }
  return copy;
}

export class FakeKubeApi {
  public readonly nodes = new Map<string, Manifest>();
  /** by `namespace/name` */
  public readonly pods = new Map<string, Manifest>();
  public readonly tokens = new Map<string, UserInfo>();
  public readonly requests: RecordedRequest[] = [];
  /** rules by user: [verbs, resource, namespace (undefined: cluster-wide)] */
  public rules: { user: string; verbs: string[]; resource: string; namespace?: string }[] = [];
  public policies: Manifest[] = [];
  /** runs before a PATCH is applied: another client changing the object in between */
  public beforePatch?: (name: string) => void;
  /** an answer of its own for a request (status and raw bytes: an error page, a proxy's), else undefined to serve it */
  public rawAnswer?: (method: string, path: string) => { code: number; body: Buffer } | undefined;
  public url = '';
  private server?: Loopback;
  private version = 1;

  /** RBAC from the rendered objects: every Role / ClusterRole bound to a ServiceAccount, as the binding says. */
  public authorize(manifests: readonly Manifest[]): void {
    for (const binding of manifests.filter((m) => m.kind === 'ClusterRoleBinding' || m.kind === 'RoleBinding')) {
      const role = manifests.find((m) => m.kind === binding.roleRef.kind && m.metadata.name === binding.roleRef.name);
      for (const subject of binding.subjects) {
        const user = `system:serviceaccount:${subject.namespace}:${subject.name}`;
        for (const rule of role.rules) {
          for (const resource of rule.resources) {
            this.rules.push({ user, verbs: rule.verbs, resource, namespace: binding.kind === 'RoleBinding' ? binding.metadata.namespace : undefined });
          }
        }
      }
    }
    this.policies = manifests.filter((m) => m.kind === 'ValidatingAdmissionPolicy');
  }

  public putNode(node: Manifest): void {
    this.nodes.set(node.metadata.name, { ...node, metadata: { ...node.metadata, resourceVersion: String(this.version++) } });
  }

  public putPod(pod: Manifest): void {
    this.pods.set(`${pod.metadata.namespace}/${pod.metadata.name}`, pod);
  }

  public taintKeys(node: string): string[] {
    return (this.nodes.get(node)!.spec.taints ?? []).map((t: Manifest) => t.key);
  }

  public async start(): Promise<void> {
    this.server = await serveLoopback((req, body, res) => this.handle(req, body, res));
    this.url = this.server.url;
  }

  public async stop(): Promise<void> {
    await this.server?.close();
  }

  private allowed(user: string, verb: string, resource: string, namespace?: string): boolean {
    return this.rules.some((r) => r.user === user && r.resource === resource && r.verbs.includes(verb)
      && (r.namespace === undefined || r.namespace === namespace));
  }

  private handle(req: http.IncomingMessage, body: string, res: http.ServerResponse): void {
    const [path, query = ''] = (req.url ?? '').split('?');
    const reply = (code: number, object: unknown) => {
      this.requests.push({ method: req.method ?? '', path, query, contentType: req.headers['content-type'], body, code });
      res.writeHead(code, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(object));
    };
    const status = (code: number, reason: string, message: string) => reply(code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code });
    const raw = this.rawAnswer?.(req.method ?? '', path);
    if (raw) {
      this.requests.push({ method: req.method ?? '', path, query, contentType: req.headers['content-type'], body, code: raw.code });
      res.writeHead(raw.code, { 'Content-Type': 'text/plain' });
      res.end(raw.body);
      return;
    }
    const user = this.tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
    if (!user) return status(401, 'Unauthorized', 'Unauthorized');
    const node = /^\/api\/v1\/nodes\/([^/]+)$/.exec(path);
    const pod = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)$/.exec(path);
    const verb = ({ GET: 'get', PATCH: 'patch' } as Record<string, string>)[req.method ?? ''];
    if (!verb || (!node && !pod)) return status(404, 'NotFound', `${req.method} ${path} not served here`);
    const resource = node ? 'nodes' : 'pods';
    const namespace = pod ? pod[1] : undefined;
    const name = node ? node[1] : pod![2];
    if (!this.allowed(user.username, verb, resource, namespace)) {
      return status(403, 'Forbidden', `${resource} "${name}" is forbidden: User "${user.username}" cannot ${verb} resource "${resource}"`);
    }
    const stored = node ? this.nodes.get(name) : this.pods.get(`${namespace}/${name}`);
    if (!stored) return status(404, 'NotFound', `${resource} "${name}" not found`);
    if (verb === 'get') return reply(200, stored);
    if (req.headers['content-type'] !== 'application/json-patch+json') return status(415, 'UnsupportedMediaType', 'only JSON patches here');
    if (!node) return status(405, 'MethodNotAllowed', 'pods are not patched here');
    this.beforePatch?.(name);
    const current = this.nodes.get(name)!;
    let patched: Manifest;
    try {
      patched = applyJsonPatch(current, JSON.parse(body));
    } catch (e) {
      return status(422, 'Invalid', `the server rejected our request due to an error in our request: ${(e as Error).message}`);
    }
    const denial = admissionDenial(this.policies, { userInfo: user }, patched, current);
    if (denial) return status(403, 'Forbidden', `nodes "${name}" is forbidden: ${denial}`);
    this.putNode(patched);
    return reply(200, this.nodes.get(name));
  }
}
