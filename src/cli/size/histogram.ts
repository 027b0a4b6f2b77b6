/**
 * The Vertical Pod Autoscaler recommender's histograms, ported to TypeScript so that `node-agents size` computes
 * the recommendation VPA would (kubernetes/autoscaler vertical-pod-autoscaler/pkg/recommender/util: histogram.go,
 * decaying_histogram.go, histogram_options.go). Exponential buckets, the percentile as the end of the bucket it
 * falls in, and samples weighted by 2^((time - reference) / halfLife).
 */

/** The bucketing scheme (histogram_options.go, exponentialHistogramOptions). */
export interface HistogramOptions {
  readonly numBuckets: number;
  /** The least weight a bucket holds to count as non-empty. */
  readonly epsilon: number;
  /** The bucket a value falls in; values outside the range go to the first or last bucket. */
  findBucket(value: number): number;
  /** The start of bucket `bucket` (0 <= bucket < numBuckets). */
  bucketStart(bucket: number): number;
}

function logBase(base: number, x: number): number {
  return Math.log(x) / Math.log(base);
}

/** NewLinearHistogramOptions: fixed-size buckets from 0, the last starting at or above maxValue. */
export function linearOptions(maxValue: number, bucketSize: number, epsilon: number): HistogramOptions {
  if (!(maxValue > 0 && bucketSize > 0 && epsilon > 0)) throw new RangeError('maxValue and bucketSize must both be positive');
  const numBuckets = Math.ceil(maxValue / bucketSize) + 1;
  return {
    numBuckets,
    epsilon,
    findBucket: (value) => Math.min(numBuckets - 1, Math.max(0, Math.trunc(value / bucketSize))),
    bucketStart: (bucket) => bucket * bucketSize,
  };
}

/**
 * NewExponentialHistogramOptions: bucket n >= 1 starts at firstBucketSize * (ratio^n - 1) / (ratio - 1), the last
 * starting at or above maxValue.
 */
export function exponentialOptions(maxValue: number, firstBucketSize: number, ratio: number, epsilon: number): HistogramOptions {
  if (!(maxValue > 0 && firstBucketSize > 0 && ratio > 1 && epsilon > 0)) {
    throw new RangeError('maxValue, firstBucketSize and epsilon must be > 0.0, ratio must be > 1.0');
  }
  const numBuckets = Math.ceil(logBase(ratio, maxValue * (ratio - 1) / firstBucketSize + 1)) + 1;
  const logRatio = Math.log(ratio);
  return {
    numBuckets,
    epsilon,
    findBucket: (value) => {
      if (!(value >= firstBucketSize)) return 0; // NaN too
      return Math.min(numBuckets - 1, Math.trunc(Math.log(value * (ratio - 1) / firstBucketSize + 1) / logRatio));
    },
    bucketStart: (bucket) => (bucket === 0 ? 0 : firstBucketSize * (Math.pow(ratio, bucket) - 1) / (ratio - 1)),
  };
}

/** histogram.go: the total weight per bucket, and the first and last non-empty bucket. */
export class Histogram {
  readonly weights: Float64Array;
  totalWeight = 0;
  minBucket: number;
  maxBucket = 0;

  constructor(readonly options: HistogramOptions) {
    this.weights = new Float64Array(options.numBuckets);
    this.minBucket = options.numBuckets - 1;
  }

  addSample(value: number, weight: number): void {
    if (!(weight >= 0)) throw new RangeError('sample weight must be non-negative');
    const bucket = this.options.findBucket(value);
    this.weights[bucket] += weight;
    this.totalWeight += weight;
    if (bucket < this.minBucket && this.weights[bucket] >= this.options.epsilon) this.minBucket = bucket;
    if (bucket > this.maxBucket && this.weights[bucket] >= this.options.epsilon) this.maxBucket = bucket;
  }

  subtractSample(value: number, weight: number): void {
    if (!(weight >= 0)) throw new RangeError('sample weight must be non-negative');
    const bucket = this.options.findBucket(value);
    const taken = weight > this.weights[bucket] - this.options.epsilon ? this.weights[bucket] : weight;
    this.totalWeight -= taken;
    this.weights[bucket] -= taken;
    this.updateMinAndMax();
  }

  merge(other: Histogram): void {
    if (other.options !== this.options) throw new RangeError("can't merge histograms with different options");
    for (let b = other.minBucket; b <= other.maxBucket; b++) this.weights[b] += other.weights[b];
    this.totalWeight += other.totalWeight;
    this.minBucket = Math.min(this.minBucket, other.minBucket);
    this.maxBucket = Math.max(this.maxBucket, other.maxBucket);
  }

  isEmpty(): boolean {
    return this.weights[this.minBucket] < this.options.epsilon;
  }

  /** The end of the bucket holding the percentile (0..1); the last bucket's start; 0 when empty. */
  percentile(p: number): number {
    if (this.isEmpty()) return 0;
    const threshold = p * this.totalWeight;
    let partial = 0;
    let bucket = this.minBucket;
    for (; bucket < this.maxBucket; bucket++) {
      partial += this.weights[bucket];
      if (partial >= threshold) break;
    }
    return bucket < this.options.numBuckets - 1 ? this.options.bucketStart(bucket + 1) : this.options.bucketStart(bucket);
  }

  /** Multiplies every weight by `factor` (percentiles unchanged). */
  scale(factor: number): void {
    for (let b = this.minBucket; b <= this.maxBucket; b++) this.weights[b] *= factor;
    this.totalWeight *= factor;
    this.updateMinAndMax();
  }

  equals(other: Histogram): boolean {
    if (other.options !== this.options || other.minBucket !== this.minBucket || other.maxBucket !== this.maxBucket) return false;
    for (let b = this.minBucket; b <= this.maxBucket; b++) if (Math.abs(this.weights[b] - other.weights[b]) > 1e-15) return false;
    return true;
  }

  private updateMinAndMax(): void {
    const epsilon = this.options.epsilon;
    while (this.weights[this.minBucket] < epsilon && this.minBucket < this.options.numBuckets - 1) this.minBucket++;
    while (this.weights[this.maxBucket] < epsilon && this.maxBucket > 0) this.maxBucket--;
  }
}

/** Go's zero time.Time (January 1, year 1, UTC) in Unix milliseconds: a decaying histogram's first reference time. */
const GO_ZERO_TIME_MS = -62_135_596_800_000;
/** decaying_histogram.go maxDecayExponent: past 2^100 the reference time moves forward. */
const MAX_DECAY_EXPONENT = 100;

/** decaying_histogram.go: a sample's weight is multiplied by 2^((time - reference) / halfLife). Times in ms. */
export class DecayingHistogram extends Histogram {
  reference = GO_ZERO_TIME_MS;

  constructor(options: HistogramOptions, readonly halfLifeMs: number) {
    super(options);
  }

  addSample(value: number, weight: number, timeMs = this.reference): void {
    super.addSample(value, weight * this.decayFactor(timeMs));
  }

  subtractSample(value: number, weight: number, timeMs = this.reference): void {
    super.subtractSample(value, weight * this.decayFactor(timeMs));
  }

  merge(other: Histogram): void {
    if (!(other instanceof DecayingHistogram) || other.halfLifeMs !== this.halfLifeMs) {
      throw new RangeError("can't merge decaying histograms with different half life periods");
    }
    if (this.reference < other.reference) this.shiftReference(other.reference);
    else if (other.reference < this.reference) other.shiftReference(this.reference);
    super.merge(other);
  }

  equals(other: Histogram): boolean {
    return other instanceof DecayingHistogram && other.halfLifeMs === this.halfLifeMs && other.reference === this.reference && super.equals(other);
  }

  private shiftReference(to: number): void {
    // an integer multiple of the half life (Go's Time.Round, from the zero time: day-aligned like Unix time)
    const rounded = Math.floor((to - GO_ZERO_TIME_MS) / this.halfLifeMs + 0.5) * this.halfLifeMs + GO_ZERO_TIME_MS;
    const exponent = Math.floor((this.reference - rounded) / this.halfLifeMs + 0.5);
    this.scale(Math.pow(2, exponent));
    this.reference = rounded;
  }

  private decayFactor(timeMs: number): number {
    if (timeMs > this.reference + this.halfLifeMs * MAX_DECAY_EXPONENT) this.shiftReference(timeMs);
    return Math.pow(2, (timeMs - this.reference) / this.halfLifeMs);
  }
}
