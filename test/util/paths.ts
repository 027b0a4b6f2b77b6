/** The folders the suites read: the repository, test/ itself and its fixtures (whichever wing's folder a suite is in). */
import * as path from 'path';

/** The repository's root. */
export const REPO = path.join(__dirname, '..', '..');
/** test/. */
export const TEST_ROOT = path.join(__dirname, '..');
/** test/fixtures/. */
export const FIXTURES = path.join(TEST_ROOT, 'fixtures');
