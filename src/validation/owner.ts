/**
 * Which construct the user built. The agent constructs build others inside them (the
 * LogCollectorDaemonSet its NodeAgentDaemonSet at `<path>/Agent`, the agents their AgentAlerts at
 * `<path>/Alerts`); an error raised inside one of those must name the construct the user wrote
 * (`LogCollectorDaemonSet chart/logs`), not the internal child the user never saw. The fleet's
 * constructs (AgentFleet, FleetCluster) are the other kind: the user builds agents inside them, so an
 * agent's error names the agent, not the fleet.
 */
import { IConstruct } from 'constructs';

/** Every library construct's kind. */
const kinds = new WeakMap<IConstruct, string>();
/** The library constructs that build library constructs inside them (an agent, its alerts). */
const owners = new WeakSet<IConstruct>();

/**
 * Records a library construct's kind; call first in its constructor, before it builds children or
 * raises an error. `holdsUsers`: the user builds constructs inside it (a fleet's cluster), so its
 * children's errors keep their own name.
 */
export function registerKind(construct: IConstruct, kind: string, holdsUsers = false): void {
  kinds.set(construct, kind);
  if (!holdsUsers) owners.add(construct);
}

/**
 * "<Kind> <path>" of the construct the user built: the outermost of the library's constructs
 * whose children lead, one scope at a time, down to `construct`.
 */
export function describeConstruct(construct: IConstruct): string {
  const built = userConstruct(construct);
  return `${kindOf(built)} ${built.node.path}`;
}

/** The construct the user built: `construct`, or the outermost library construct it is part of. */
export function userConstruct(construct: IConstruct): IConstruct {
  let built = construct;
  for (let scope = construct.node.scope; scope && owners.has(scope); scope = scope.node.scope) built = scope;
  return built;
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
  return scope !== undefined && owners.has(scope);
}
