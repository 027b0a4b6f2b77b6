/**
 * Which construct the user built. The agent constructs build others inside them (the
 * LogCollectorDaemonSet its NodeAgentDaemonSet at `<path>/Agent`, the agents their AgentAlerts at
 * `<path>/Alerts`); an error raised inside one of those must name the construct the user wrote
 * (`LogCollectorDaemonSet chart/logs`), not the internal child the user never saw.
 */
import { IConstruct } from 'constructs';

const kinds = new WeakMap<IConstruct, string>();

/** Records a library construct's kind; call first in its constructor, before it builds children. */
export function registerKind(construct: IConstruct, kind: string): void {
  kinds.set(construct, kind);
}

/**
 * "<Kind> <path>" of the construct the user built: the outermost of the library's constructs
 * whose children lead, one scope at a time, down to `construct`.
 */
export function describeConstruct(construct: IConstruct, kind: string): string {
  let described = `${kind} ${construct.node.path}`;
  for (let scope = construct.node.scope; scope; scope = scope.node.scope) {
    const k = kinds.get(scope);
    if (k === undefined) break;
    described = `${k} ${scope.node.path}`;
  }
  return described;
}

/** The kind a library construct registered; throws for a construct that registered none. */
export function kindOf(construct: IConstruct): string {
  const kind = kinds.get(construct);
  if (kind === undefined) throw new Error(`${construct.node.path}: not a construct of this library (no registerKind)`);
  return kind;
}

/** Whether a library construct built `construct` (so its props are the library's, not the user's). */
export function builtByLibrary(construct: IConstruct): boolean {
  const scope = construct.node.scope;
  return scope !== undefined && kinds.has(scope);
}
