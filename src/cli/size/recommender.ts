/**
 * The recommendation `node-agents size` gives, computed as the Vertical Pod Autoscaler's recommender does with its
 * default flags (kubernetes/autoscaler vertical-pod-autoscaler/pkg/recommender: logic/recommender.go
 * CreatePodResourceRecommender and GetRecommendedPodResources, logic/estimator.go, model/aggregations_config.go,
 * model/aggregate_container_state.go, model/container.go RecordOOM). The constants are VPA's defaults, pinned here:
 * a change of them changes every recommendation and is a change of this file.
 */
import { DecayingHistogram, exponentialOptions, Histogram } from './histogram';

const DAY_MS = 24 * 3600 * 1000;

/** VPA's defaults (recommender.go flags, aggregations_config.go constants). */
export const VPA = {
  /** recommendation-margin-fraction: added to every estimate */
  safetyMarginFraction: 0.15,
  /** pod-recommendation-min-cpu-millicores, in cores */
  podMinCpuCores: 0.025,
  /** pod-recommendation-min-memory-mb (read as MiB: podMinMemoryMb*1024*1024), in bytes */
  podMinMemoryBytes: 250 * 1024 * 1024,
  targetCpuPercentile: 0.9,
  lowerBoundCpuPercentile: 0.5,
  upperBoundCpuPercentile: 0.95,
  targetMemoryPercentile: 0.9,
  lowerBoundMemoryPercentile: 0.5,
  upperBoundMemoryPercentile: 0.95,
  /** DefaultMemoryAggregationInterval: one memory peak per container per interval */
  memoryAggregationIntervalMs: DAY_MS,
  /** DefaultMemoryHistogramDecayHalfLife and DefaultCPUHistogramDecayHalfLife */
  halfLifeMs: DAY_MS,
  /** DefaultOOMBumpUpRatio */
  oomBumpUpRatio: 1.2,
  /** DefaultOOMMinBumpUp: 100 MiB */
  oomMinBumpUpBytes: 100 * 1024 * 1024,
  /** minSampleWeight: a CPU sample's weight (VPA: max(request cores, 0.1); the request is not read here) */
  minSampleWeight: 0.1,
  /** DefaultHistogramBucketSizeGrowth */
  bucketSizeGrowth: 0.05,
} as const;

/** epsilon = 0.001 * minSampleWeight (aggregations_config.go) */
const EPSILON = 0.001 * VPA.minSampleWeight;
/** cpuHistogramOptions: exponential, first bucket 0.001 core, up to 1000 cores, 5% growth */
export const CPU_HISTOGRAM = exponentialOptions(1000, 0.001, 1 + VPA.bucketSizeGrowth, EPSILON);
/** memoryHistogramOptions: exponential, first bucket 1e7 bytes, up to 1e12 bytes, 5% growth */
export const MEMORY_HISTOGRAM = exponentialOptions(1e12, 1e7, 1 + VPA.bucketSizeGrowth, EPSILON);

/** AggregateContainerState: the usage of one agent's containers on one group of nodes. */
export class UsageState {
  readonly cpu = new DecayingHistogram(CPU_HISTOGRAM, VPA.halfLifeMs);
  readonly memoryPeaks = new DecayingHistogram(MEMORY_HISTOGRAM, VPA.halfLifeMs);
  /** the same samples without decay, for the distribution printed beside the recommendation */
  readonly cpuPlain = new Histogram(CPU_HISTOGRAM);
  readonly memoryPlain = new Histogram(MEMORY_HISTOGRAM);
  firstSampleMs = Number.POSITIVE_INFINITY;
  lastSampleMs = Number.NEGATIVE_INFINITY;
  /** CPU samples, each counted as the minutes it stands for (VPA counts one sample a minute) */
  totalSamples = 0;
  cpuSamples = 0;
  memoryPeakCount = 0;
  cpuMax = 0;
  memoryMax = 0;
  ooms = 0;
  restarts = 0;
  /** the largest memory an OOM-killed container was found using (or requesting) before it was killed */
  oomMemory = 0;

  /** addCPUSample: `minutes` is what one sample stands for (the query step, in minutes). */
  addCpu(cores: number, timeMs: number, minutes = 1): void {
    this.cpu.addSample(cores, VPA.minSampleWeight, timeMs);
    this.cpuPlain.addSample(cores, 1);
    this.cpuMax = Math.max(this.cpuMax, cores);
    this.firstSampleMs = Math.min(this.firstSampleMs, timeMs);
    this.lastSampleMs = Math.max(this.lastSampleMs, timeMs);
    this.totalSamples += minutes;
    this.cpuSamples++;
  }

  /** One container's memory peak over one aggregation interval (weight 1.0, at the peak's time). */
  addMemoryPeak(bytes: number, timeMs: number): void {
    this.memoryPeaks.addSample(bytes, 1, timeMs);
    this.memoryPlain.addSample(bytes, 1);
    this.memoryMax = Math.max(this.memoryMax, bytes);
    this.memoryPeakCount++;
  }

  /** MergeContainerState, plus the counts this tool keeps. */
  mergeFrom(other: UsageState): void {
    this.cpu.merge(other.cpu);
    this.memoryPeaks.merge(other.memoryPeaks);
    this.cpuPlain.merge(other.cpuPlain);
    this.memoryPlain.merge(other.memoryPlain);
    this.firstSampleMs = Math.min(this.firstSampleMs, other.firstSampleMs);
    this.lastSampleMs = Math.max(this.lastSampleMs, other.lastSampleMs);
    this.totalSamples += other.totalSamples;
    this.cpuSamples += other.cpuSamples;
    this.memoryPeakCount += other.memoryPeakCount;
    this.cpuMax = Math.max(this.cpuMax, other.cpuMax);
    this.memoryMax = Math.max(this.memoryMax, other.memoryMax);
    this.ooms += other.ooms;
    this.restarts += other.restarts;
    this.oomMemory = Math.max(this.oomMemory, other.oomMemory);
  }
}

/**
 * container.go RecordOOM: the memory an OOM-killed container needed, from what it used (the larger of its request
 * and its peak in the interval): max(used + OOMMinBumpUp, used * OOMBumpUpRatio). It replaces that interval's peak.
 */
export function oomBump(usedBytes: number): number {
  return Math.max(usedBytes + VPA.oomMinBumpUpBytes, usedBytes * VPA.oomBumpUpRatio);
}

/**
 * estimator.go getConfidence: the history in days, the lesser of the time between the first and last sample and
 * the sample count read as one a minute.
 */
export function confidence(state: UsageState): number {
  if (state.cpuSamples === 0) return 0;
  const lifespanDays = (state.lastSampleMs - state.firstSampleMs) / DAY_MS;
  return Math.min(lifespanDays, state.totalSamples / (60 * 24));
}

/** WithCPUConfidenceMultiplier / WithMemoryConfidenceMultiplier: base * (1 + multiplier/confidence)^exponent. */
export function confidenceMultiplier(multiplier: number, exponent: number, conf: number): number {
  return Math.pow(1 + multiplier / conf, exponent);
}

export interface Estimate {
  readonly cpu: number;
  readonly memory: number;
}

export interface Recommendation {
  /** CPU cores and memory bytes: VPA's target */
  readonly target: Estimate;
  readonly lowerBound: Estimate;
  /** infinite with no history */
  readonly upperBound: Estimate;
  readonly confidenceDays: number;
}

/** GetRecommendedPodResources for one container: percentile, margin, confidence multiplier, pod minimum. */
export function recommend(state: UsageState, containersPerPod = 1): Recommendation {
  const margin = 1 + VPA.safetyMarginFraction;
  const conf = confidence(state);
  const minCpu = VPA.podMinCpuCores / containersPerPod;
  const minMemory = VPA.podMinMemoryBytes / containersPerPod;
  // ScaleResource of 0 is 0, whatever the factor (no history: an infinite upper bound of nothing)
  const scaled = (value: number, factor: number) => (value === 0 ? 0 : value * margin * factor);
  const at = (cpuP: number, memP: number, factor: number): Estimate => ({
    cpu: Math.max(scaled(state.cpu.percentile(cpuP), factor), minCpu),
    memory: Math.max(scaled(state.memoryPeaks.percentile(memP), factor), minMemory),
  });
  return {
    target: at(VPA.targetCpuPercentile, VPA.targetMemoryPercentile, 1),
    lowerBound: at(VPA.lowerBoundCpuPercentile, VPA.lowerBoundMemoryPercentile, confidenceMultiplier(0.001, -2, conf)),
    upperBound: at(VPA.upperBoundCpuPercentile, VPA.upperBoundMemoryPercentile, confidenceMultiplier(1, 1, conf)),
    confidenceDays: conf,
  };
}
