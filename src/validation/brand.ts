/**
 * How the type checks recognise the library's own classes without loading the modules that declare
 * them (the checks sit below every construct): each class carries a brand on its prototype, set
 * once, right after its declaration, so instances of subclasses carry it too. The brand is the
 * class's jsii name (its fqn, "cdk8s-node-agents.UpdateStrategy"), the name the generated type
 * table uses.
 */
const PACKAGE = 'cdk8s-node-agents';

/** Marks `cls` as the library's class `name` ("UpdateStrategy"); call once after the class. */
export function brand(cls: { readonly prototype: object }, name: string): void {
  Object.defineProperty(cls.prototype, Symbol.for(`${PACKAGE}.${name}`), { value: true });
}

/** Whether `value` is an instance of the library's class with this fqn (or of a subclass of it). */
export function hasBrand(value: unknown, fqn: string): boolean {
  return typeof value === 'object' && value !== null && (value as { [k: symbol]: unknown })[Symbol.for(fqn)] === true;
}

/** Whether a type's fqn names one of the library's own types. */
export function isOwnType(fqn: string): boolean {
  return fqn.startsWith(`${PACKAGE}.`);
}
