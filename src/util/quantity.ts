/**
 * Kubernetes resource quantities ("100m", "128Mi", "1.5", "2G", "1e3") as plain numbers,
 * for comparing requests with limits. Returns NaN for text that is not a quantity.
 */
const SUFFIXES: Record<string, number> = {
  'n': 1e-9,
  'u': 1e-6,
  'm': 1e-3,
  '': 1,
  'k': 1e3,
  'M': 1e6,
  'G': 1e9,
  'T': 1e12,
  'P': 1e15,
  'E': 1e18,
  'Ki': 2 ** 10,
  'Mi': 2 ** 20,
  'Gi': 2 ** 30,
  'Ti': 2 ** 40,
  'Pi': 2 ** 50,
  'Ei': 2 ** 60,
};

/**
 * The number part has one way to match any text (`\d+(\.\d*)?` rather than `\d+\.?\d*`, which can
 * split a run of digits n ways and so took quadratic time to fail on a long one).
 */
const QUANTITY = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?)$/;

export function parseQuantity(text: string): number {
  const match = QUANTITY.exec(text.trim());
  if (!match) return Number.NaN;
  const [, number, exponent, suffix] = match;
  if (exponent) return Number.parseFloat(number + exponent);
  return Number.parseFloat(number) * SUFFIXES[suffix ?? ''];
}

/** Bytes as a quantity parseQuantity reads back: `64Gi`, `512Mi`, or a plain number. */
export function formatBytes(bytes: number): string {
  for (const [suffix, size] of [['Ti', 2 ** 40], ['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 2 ** 10]] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size}${suffix}`;
  }
  return String(bytes);
}
