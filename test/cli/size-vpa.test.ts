/**
 * The VPA recommender's own table tests, ported (kubernetes/autoscaler vertical-pod-autoscaler/pkg/recommender):
 * each test names the upstream file and function it ports. The numbers are upstream's.
 */
import { DecayingHistogram, exponentialOptions, Histogram, linearOptions } from '../../src/cli/size/histogram';
import { confidence, confidenceMultiplier, CPU_HISTOGRAM, MEMORY_HISTOGRAM, oomBump, recommend, UsageState, VPA } from '../../src/cli/size/recommender';

const weightEpsilon = 1e-15;
const testOptions = linearOptions(10, 1, weightEpsilon);
const HOUR = 3600 * 1000;
const startTime = 1234567890 * 1000;

const near = (actual: number, expected: number, rel = 1e-12) => expect(Math.abs(actual - expected)).toBeLessThanOrEqual(rel * Math.abs(expected));

describe('util/histogram_options_test.go', () => {
  test('TestLinearHistogramOptions', () => {
    const o = linearOptions(5, 0.3, 0.001);
    expect(o.numBuckets).toBe(18);
    expect(o.bucketStart(0)).toBe(0);
    near(o.bucketStart(17), 5.1);
    expect([o.findBucket(-1), o.findBucket(0), o.findBucket(1.3), o.findBucket(100)]).toEqual([0, 0, 4, 17]);
  });

  test('TestExponentialHistogramOptions', () => {
    const o = exponentialOptions(500, 40, 1.5, 0.001);
    expect(o.numBuckets).toBe(6);
    [0, 40, 100, 190, 325, 527.5].forEach((start, b) => near(o.bucketStart(b) + 1e-300, start + 1e-300));
    expect([o.findBucket(-1), o.findBucket(39.99), o.findBucket(40), o.findBucket(100), o.findBucket(900)]).toEqual([0, 0, 1, 2, 5]);
  });
});

describe('util/histogram_test.go', () => {
  test('TestPercentilesEmptyHistogram', () => {
    const h = new Histogram(testOptions);
    for (const p of [-0.5, 0, 0.5, 1, 1.5]) expect(h.percentile(p)).toBe(0);
  });

  test('TestPercentiles', () => {
    const h = new Histogram(testOptions);
    for (let i = 1; i <= 4; i++) h.addSample(i, i);
    const expected = [2, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5];
    expected.forEach((v, i) => near(h.percentile(i / 10), v));
  });

  test('TestPercentileOutOfBounds', () => {
    const h = new Histogram(linearOptions(1, 0.1, weightEpsilon));
    h.addSample(0.1, 0.1);
    h.addSample(0.2, 0.2);
    near(h.percentile(-0.1), 0.2);
    near(h.percentile(1.1), 0.3);
    h.addSample(0, 0.1);
    h.addSample(1, 0.2);
    near(h.percentile(-0.1), 0.1);
    near(h.percentile(1.1), 1.0);
  });

  test('TestEmptyHistogram', () => {
    const h = new Histogram(linearOptions(1, 0.1, weightEpsilon));
    expect(h.isEmpty()).toBe(true);
    h.addSample(0.1, weightEpsilon * 2.5);
    expect(h.isEmpty()).toBe(false);
    h.subtractSample(0.1, weightEpsilon);
    expect(h.isEmpty()).toBe(false);
    h.subtractSample(0.1, weightEpsilon);
    expect(h.isEmpty()).toBe(true);
  });

  test('TestNonEmptyOnEpsilonAddition', () => {
    const h = new Histogram(linearOptions(1, 0.1, weightEpsilon));
    h.addSample(9.9, weightEpsilon * 3);
    expect(h.isEmpty()).toBe(false);
    h.addSample(0.1, weightEpsilon * 0.3);
    expect(h.isEmpty()).toBe(false);
    h.addSample(999.9, weightEpsilon * 0.3);
    expect(h.isEmpty()).toBe(false);
  });

  test('TestHistogramMerge', () => {
    const h1 = new Histogram(testOptions);
    h1.addSample(1, 1); h1.addSample(2, 1);
    const h2 = new Histogram(testOptions);
    h2.addSample(2, 1); h2.addSample(3, 1);
    const expected = new Histogram(testOptions);
    for (const v of [1, 2, 2, 3]) expected.addSample(v, 1);
    h1.merge(h2);
    expect(h1.equals(expected)).toBe(true);
  });
});

describe('util/decaying_histogram_test.go', () => {
  test('TestPercentilesEmptyDecayingHistogram', () => {
    const h = new DecayingHistogram(testOptions, HOUR);
    for (const p of [-0.5, 0, 0.5, 1, 1.5]) expect(h.percentile(p)).toBe(0);
  });

  test('TestSimpleDecay', () => {
    const h = new DecayingHistogram(testOptions, HOUR);
    h.addSample(2, 1000, startTime);
    h.addSample(1, 1, startTime + 20 * HOUR);
    near(h.percentile(0.999), 2);
    near(h.percentile(1.0), 3);
  });

  test('TestLongtermDecay', () => {
    const h = new DecayingHistogram(testOptions, HOUR);
    h.addSample(2, 1, startTime);
    h.addSample(1, 1, startTime + 101 * HOUR);
    near(h.percentile(1.0), 2);
  });

  test('TestDecayingHistogramPercentiles', () => {
    const h = new DecayingHistogram(testOptions, HOUR);
    for (let i = 1; i <= 4; i++) h.addSample(i, i, startTime + (i - 1) * HOUR);
    const cases: [number, number][] = [[0, 2], [0.02, 2], [0.03, 3], [0.1, 3], [0.11, 4], [0.34, 4], [0.35, 5], [1, 5]];
    for (const [p, v] of cases) near(h.percentile(p), v);
  });

  test('TestNoDecay', () => {
    const h = new DecayingHistogram(testOptions, HOUR);
    for (let i = 1; i <= 4; i++) h.addSample(i, i, startTime);
    [2, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5].forEach((v, i) => near(h.percentile(i / 10), v));
  });

  test('TestDecayingHistogramMerge', () => {
    const h1 = new DecayingHistogram(testOptions, HOUR);
    h1.addSample(1, 1, startTime);
    h1.addSample(2, 1, startTime + HOUR);
    const h2 = new DecayingHistogram(testOptions, HOUR);
    h2.addSample(2, 1, startTime + 2 * HOUR);
    h2.addSample(3, 1, startTime + HOUR);
    const expected = new DecayingHistogram(testOptions, HOUR);
    expected.addSample(2, 1, startTime + 2 * HOUR);
    expected.addSample(2, 1, startTime + HOUR);
    expected.addSample(3, 1, startTime + HOUR);
    expected.addSample(1, 1, startTime);
    h1.merge(h2);
    expect(h1.equals(expected)).toBe(true);
  });
});

describe('logic/estimator_test.go', () => {
  test('TestPercentileEstimator: p20 of CPU 1,2,3 cores is 1 core, p50 of memory 1e9,2e9,3e9 is 2e9 (within 5%)', () => {
    const cpu = new Histogram(CPU_HISTOGRAM);
    for (const v of [1, 2, 3]) cpu.addSample(v, 1);
    const memory = new Histogram(MEMORY_HISTOGRAM);
    for (const v of [1e9, 2e9, 3e9]) memory.addSample(v, 1);
    expect(Math.abs(cpu.percentile(0.2) - 1) / 1).toBeLessThan(0.05);
    expect(Math.abs(memory.percentile(0.5) - 2e9) / 2e9).toBeLessThan(0.05);
  });

  test('TestConfidenceMultiplier: 9 samples 2 minutes apart give confidence 9/(60*24) = 0.00625, and 3.14 * (1 + 0.1/0.00625)^2 = 907.46', () => {
    const s = new UsageState();
    for (let i = 0; i < 9; i++) s.addCpu(1, i * 2 * 60 * 1000);
    expect(confidence(s)).toBe(0.00625);
    near(3.14 * confidenceMultiplier(0.1, 2, confidence(s)), 907.46, 1e-9);
    // no history: +Inf with exponent +1, 0 with exponent -1
    expect(confidenceMultiplier(1, 1, confidence(new UsageState()))).toBe(Infinity);
    expect(confidenceMultiplier(1, -1, confidence(new UsageState()))).toBe(0);
  });

  test('TestMarginEstimator and TestMinResourcesEstimator: the margin multiplies, the pod minimum is a floor', () => {
    const s = new UsageState();
    for (let i = 0; i < 3 * 24 * 60; i++) s.addCpu(3.14, i * 60 * 1000);
    for (let d = 0; d < 3; d++) s.addMemoryPeak(4e9, d * 24 * HOUR);
    const r = recommend(s);
    // p90 falls in the bucket holding 3.14: its end, within the 5% bucket growth, times 1.15
    expect(r.target.cpu).toBeGreaterThanOrEqual(3.14 * 1.15);
    expect(r.target.cpu).toBeLessThan(3.14 * 1.05 * 1.15);
    expect(recommend(new UsageState()).target).toEqual({ cpu: VPA.podMinCpuCores, memory: VPA.podMinMemoryBytes });
  });
});

describe('model/container.go RecordOOM (DefaultOOMBumpUpRatio 1.2, DefaultOOMMinBumpUp 100 MiB)', () => {
  test('small containers get +100 MiB, large ones +20%', () => {
    expect(oomBump(100 * 1024 * 1024)).toBe(200 * 1024 * 1024);
    expect(oomBump(1000 * 1024 * 1024)).toBe(1200 * 1024 * 1024);
  });
});
