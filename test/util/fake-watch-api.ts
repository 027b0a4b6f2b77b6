/**
 * A stand-in for the API server endpoints a rollout watcher uses, on 127.0.0.1: get a DaemonSet, list pods by label
 * selector, list events by involvedObject.name, and get / merge-patch / create ConfigMaps (the record ConfigMaps,
 * which the gate Jobs use too: 404 for a missing one, 409 for an existing one). Each request is authorized
 * with the rendered Role's rules as RBAC does (apiGroup, resource, verb, resourceNames against the name in the path;
 * a list or a create carries no name), with the ServiceAccount's bearer token. What it serves comes from a scenario
 * called on every read of the DaemonSet (so a rollout can progress between reads).
 */
import * as http from 'http';
import { Loopback, serveLoopback } from './loopback';
import { validateManifests } from './manifests';

/* eslint-disable @typescript-eslint/no-explicit-any */

export const TOKEN = 'watch-token';

export interface ClusterView {
  readonly daemonSet?: any;
  readonly pods: any[];
  readonly events?: any[];
}

export class FakeWatchApi {
  public readonly configMaps = new Map<string, { data: Record<string, string> }>();
  public readonly requests: string[] = [];
  public readonly refused: string[] = [];
  public rules: any[] = [];
  /** an answer of its own for a request (status and raw bytes: an error page, a proxy's), else undefined to serve it */
  public rawAnswer?: (method: string, path: string) => { code: number; body: Buffer } | undefined;
  public url = '';
  private reads = 0;
  private view: ClusterView = { pods: [] };
  private server?: Loopback;
  private readonly namespace: string;
  /** read n (0, 1, …) of the DaemonSet, at `now` (epoch seconds) */
  private scenario: ((read: number, now: number) => ClusterView) | undefined;

  constructor(namespace: string) {
    this.namespace = namespace;
  }

  public reset(scenario: (read: number, now: number) => ClusterView): void {
    this.scenario = scenario;
    this.reads = 0;
    this.view = scenario(0, Math.floor(Date.now() / 1000));
    this.requests.length = 0;
    this.refused.length = 0;
    this.configMaps.clear();
    this.rawAnswer = undefined;
  }

  public async start(): Promise<void> {
    this.server = await serveLoopback((req, body, res) => this.handle(req, body, res));
    this.url = this.server.url;
  }

  public async stop(): Promise<void> {
    await this.server?.close();
  }

  private allowed(group: string, resource: string, verb: string, name: string | undefined): boolean {
    return this.rules.some((r: any) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb)
      && (r.resourceNames === undefined || (name !== undefined && r.resourceNames.includes(name))));
  }

  private handle(req: http.IncomingMessage, body: string, res: http.ServerResponse): void {
    const reply = (code: number, object: unknown) => {
      res.writeHead(code, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(object));
    };
    this.requests.push(`${req.method} ${req.url}`);
    const raw = this.rawAnswer?.(req.method ?? '', new URL(req.url ?? '/', 'http://x').pathname);
    if (raw) {
      res.writeHead(raw.code, { 'Content-Type': 'text/plain' });
      res.end(raw.body);
      return;
    }
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return reply(401, { kind: 'Status', reason: 'Unauthorized' });
    const url = new URL(req.url ?? '/', 'http://x');
    const m = /^\/(?:api\/v1|apis\/(apps)\/v1)\/namespaces\/([^/]+)\/([a-z]+)(?:\/([^/]+))?$/.exec(url.pathname);
    if (!m) return reply(404, { kind: 'Status', reason: 'NotFound' });
    const [, group = '', namespace, resource, name] = m;
    const verb = req.method === 'GET' ? (name === undefined ? 'list' : 'get') : ({ PATCH: 'patch', POST: 'create' } as Record<string, string>)[req.method ?? ''];
    if (namespace !== this.namespace || !this.allowed(group, resource, verb, name)) {
      this.refused.push(`${verb} ${group}/${resource} ${name ?? ''}`);
      return reply(403, { kind: 'Status', reason: 'Forbidden', message: `${resource} "${name ?? ''}" is forbidden: cannot ${verb}` });
    }
    if (resource === 'daemonsets') {
      this.view = this.scenario?.(this.reads++, Math.floor(Date.now() / 1000)) ?? { pods: [] };
      const ds = this.view.daemonSet;
      return ds && ds.metadata.name === name ? reply(200, ds) : reply(404, { kind: 'Status', reason: 'NotFound' });
    }
    if (resource === 'pods') {
      const wanted = (url.searchParams.get('labelSelector') ?? '').split(',').filter((t) => t !== '').map((t) => t.split('='));
      const items = this.view.pods.filter((p) => wanted.every(([k, v]) => p.metadata.labels?.[k] === v));
      return reply(200, { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items });
    }
    if (resource === 'events') {
      const [key, value] = (url.searchParams.get('fieldSelector') ?? '').split('=');
      const items = (this.view.events ?? []).filter((e) => key !== 'involvedObject.name' || e.involvedObject.name === value);
      return reply(200, { kind: 'EventList', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items });
    }
    return this.configMap(verb, name, body, req, reply);
  }

  private configMap(verb: string, name: string | undefined, body: string, req: http.IncomingMessage,
    reply: (code: number, object: unknown) => void): void {
    if (verb === 'get') {
      const cm = this.configMaps.get(name!);
      return cm ? reply(200, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name, namespace: this.namespace }, data: cm.data }) : reply(404, { kind: 'Status', reason: 'NotFound' });
    }
    if (verb === 'patch') {
      const cm = this.configMaps.get(name!);
      if (!cm) return reply(404, { kind: 'Status', reason: 'NotFound' });
      if (req.headers['content-type'] !== 'application/merge-patch+json') return reply(415, { kind: 'Status' });
      Object.assign(cm.data, JSON.parse(body).data);
      return reply(200, { kind: 'ConfigMap', data: cm.data });
    }
    const created = JSON.parse(body);
    if (this.configMaps.has(created.metadata.name)) return reply(409, { kind: 'Status', reason: 'AlreadyExists' });
    // what the script creates is a ConfigMap the API server accepts (it throws, failing the suite, otherwise)
    validateManifests([created]);
    this.configMaps.set(created.metadata.name, { data: created.data });
    return reply(201, created);
  }
}
