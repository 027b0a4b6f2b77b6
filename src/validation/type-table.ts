/** The shape of the generated type table (./struct-shapes.generated.ts), read by ./struct-check. */

/** A type as the generated table writes it: a jsii primitive, a collection, a union or a named type. */
export type TypeRef =
  | string
  | { readonly array: TypeRef }
  | { readonly map: TypeRef }
  | { readonly union: readonly TypeRef[] }
  | { readonly ref: string };

/** One field of a struct, or one parameter of a method. */
export interface FieldType {
  readonly type: TypeRef;
  readonly optional?: boolean;
}

/** The generated description of the package's public types (see projenrc/struct-shapes.ts). */
export interface TypeTable {
  /** Structs (jsii datatypes): own fields, and the structs they extend. */
  readonly structs: { readonly [name: string]: { readonly bases: readonly string[]; readonly fields: { readonly [field: string]: FieldType } } };
  /** Enums: member names, and their values (what a prop holds), in the same order. */
  readonly enums: { readonly [name: string]: { readonly members: readonly string[]; readonly values: readonly unknown[] } };
  /** Classes: the jsii name (fqn), and the static factories that make one. */
  readonly classes: { readonly [name: string]: { readonly fqn: string; readonly factories: readonly string[]; readonly newable?: boolean } };
  /** Behavioural interfaces: the members (methods, required properties) an implementation has. */
  readonly interfaces: { readonly [name: string]: { readonly bases: readonly string[]; readonly members: readonly string[] } };
  /** Parameters of every constructor and method, by "Class.method" ("Class.constructor"). */
  readonly methods: { readonly [method: string]: readonly (FieldType & { readonly name: string; readonly variadic?: boolean })[] };
}
