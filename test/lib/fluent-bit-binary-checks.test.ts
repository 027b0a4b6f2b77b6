/**
 * What a fluent-bit 5.1.1 built with the release image's plugins (dockerfiles/Dockerfile's cmake
 * options) did with configs the typed factories render: each case here is one the library accepted
 * and the binary refused, crashed on or silently changed, with the upstream fact behind it.
 */
import { FluentBitFilter } from '../../src/fluent-bit/filters';
import { ValidationError } from '../../src/validation/errors';

describe('throttle filter: values fluent-bit would change silently (plugins/filter_throttle/throttle.c)', () => {
  test('an interval under one second is refused: parse_duration returns an int, time_ticker sleeps 0 s and spins', () => {
    // measured: interval 0.5s with Print_Status logged 29,139 status lines in 5 s (1 s: five), and burnt a core
    for (const interval of ['0.5s', '0.9', '0s', '0', '0.01m']) {
      expect(() => FluentBitFilter.throttle({ rate: 100, interval })).toThrow(ValidationError);
      expect(() => FluentBitFilter.throttle({ rate: 100, interval })).toThrow(/under one second.*spin on a CPU core/);
    }
  });

  test('an interval of a fraction of seconds is refused: parse_duration truncates it to whole seconds', () => {
    expect(() => FluentBitFilter.throttle({ rate: 100, interval: '1.5s' })).toThrow(/1\.5 seconds.*tick every 1 s.*'1s' or '2s'/);
    expect(() => FluentBitFilter.throttle({ rate: 100, interval: '1.01m' })).toThrow(/whole number of seconds/);
  });

  test('whole seconds in any unit are taken as they are (apply_suffix: s, m, h, d)', () => {
    for (const interval of ['1', '1s', '2s', '0.5m', '1m', '1.5h', '1d']) {
      expect(FluentBitFilter.throttle({ rate: 100, interval }).pluginName).toBe('throttle');
    }
  });

  test('a rate below 1 is refused: configure replaces a rate <= 1.0 by THROTTLE_DEFAULT_RATE "1"', () => {
    expect(() => FluentBitFilter.throttle({ rate: 0.5 })).toThrow(/rate 0\.5 is below 1.*2 times more records/);
    expect(FluentBitFilter.throttle({ rate: 1 }).pluginName).toBe('throttle');
    expect(FluentBitFilter.throttle({ rate: 50.5 }).pluginName).toBe('throttle');
  });

  test('a window of 1 is refused: configure replaces a window <= 1 by THROTTLE_DEFAULT_WINDOW "5"', () => {
    expect(() => FluentBitFilter.throttle({ rate: 10, window: 1 })).toThrow(/window 1 is below 2.*default 5/);
    expect(FluentBitFilter.throttle({ rate: 10, window: 2 }).pluginName).toBe('throttle');
  });
});
