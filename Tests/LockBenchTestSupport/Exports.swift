// The test doubles and fixtures (no XCTest, so the benchmark can link them too) come with the
// test support: a test imports LockBenchTestSupport alone.
@_exported import LockBenchTestDoubles
