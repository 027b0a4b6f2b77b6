import { NodeSelectorRequirementJson } from '../scheduling/types';
import { brand } from '../validation/brand';
import { checkLabelKey, checkLabelValue, describeValue } from '../validation/values';

/** Node selector operators of required node affinity. */
export enum NodeOperator {
  /** The label's value is one of the values. */
  IN = 'In',
  /** The label is absent, or its value is none of the values. */
  NOT_IN = 'NotIn',
  /** The label is present, whatever its value. */
  EXISTS = 'Exists',
  /** The label is absent. */
  DOES_NOT_EXIST = 'DoesNotExist',
  /** The label's value, as an integer, is greater than the value. */
  GT = 'Gt',
  /** The label's value, as an integer, is less than the value. */
  LT = 'Lt',
}

/**
 * One requirement on a node's labels, rendered as a required node-affinity expression.
 *
 * `NotIn` and `DoesNotExist` match nodes that lack the key: use them to exclude, never to select.
 */
export class NodeRequirement {
  /** The node's `key` label is one of `values`. */
  public static in(key: string, values: string[]): NodeRequirement {
    return new NodeRequirement(key, NodeOperator.IN, values);
  }

  /** The node lacks `key`, or its value is none of `values`. */
  public static notIn(key: string, values: string[]): NodeRequirement {
    return new NodeRequirement(key, NodeOperator.NOT_IN, values);
  }

  /** The node has the label `key`. */
  public static exists(key: string): NodeRequirement {
    return new NodeRequirement(key, NodeOperator.EXISTS, []);
  }

  /** The node does not have the label `key`. */
  public static doesNotExist(key: string): NodeRequirement {
    return new NodeRequirement(key, NodeOperator.DOES_NOT_EXIST, []);
  }

  /** The node's `key` label, read as an integer, is greater than `value`. */
  public static gt(key: string, value: number): NodeRequirement {
    return new NodeRequirement(key, NodeOperator.GT, [valueText(value)]);
  }

  /** The node's `key` label, read as an integer, is less than `value`. */
  public static lt(key: string, value: number): NodeRequirement {
    return new NodeRequirement(key, NodeOperator.LT, [valueText(value)]);
  }

  private constructor(
    /** The node label key. */
    public readonly key: string,
    /** How the label is compared. */
    public readonly operator: NodeOperator,
    /** The values compared against (empty for Exists / DoesNotExist). */
    public readonly values: string[],
  ) {}

  /** Problems with this requirement as sentences; empty when valid. */
  public problems(): string[] {
    const problems: string[] = [];
    // Built from JavaScript or parsed YAML, the key and values may not be what the types say.
    if (typeof this.key !== 'string') return [`the key must be a string such as "topology.kubernetes.io/zone", got ${describeValue(this.key)}`];
    if (!Array.isArray(this.values)) return [`the values of "${this.key}" must be an array of strings, got ${describeValue(this.values)}`];
    if (!this.key) problems.push('the key is empty');
    else problems.push(...checkLabelKey('the key', this.key));
    switch (this.operator) {
      case NodeOperator.IN:
      case NodeOperator.NOT_IN:
        if (this.values.length === 0) problems.push(`${this.operator} on "${this.key}" needs at least one value`);
        this.values.forEach((v, i) => problems.push(...checkLabelValue(`value ${i} of "${this.key}"`, v)));
        break;
      case NodeOperator.EXISTS:
      case NodeOperator.DOES_NOT_EXIST:
        if (this.values.length > 0) problems.push(`${this.operator} on "${this.key}" takes no values`);
        break;
      default:
        // The API server parses Gt/Lt values as int64.
        if (this.values.length !== 1 || !/^-?\d{1,18}$/.test(this.values[0])) {
          problems.push(`${this.operator} on "${this.key}" needs exactly one integer value (a whole number of at most 18 digits), `
            + `got ${this.values.length === 1 ? this.values[0] : describeValue(this.values)}`);
        }
    }
    return problems;
  }

  /**
   * The expression as Kubernetes JSON.
   * @internal
   */
  public _toJson(): NodeSelectorRequirementJson {
    return this.values.length > 0
      ? { key: this.key, operator: this.operator, values: [...this.values] }
      : { key: this.key, operator: this.operator };
  }
}
brand(NodeRequirement, 'NodeRequirement');

/**
 * A Gt/Lt value as the requirement holds it: a number as written; anything else (from JavaScript or
 * parsed YAML) as describeValue shows it, so problems() reports the value, never "[object Object]".
 */
function valueText(value: unknown): string {
  return typeof value === 'number' ? `${value}` : describeValue(value);
}
