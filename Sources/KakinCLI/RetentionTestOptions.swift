import AppStoreModels
import ArgumentParser
import StoreSandbox

/// How the sandbox runs Retention Messaging's performance test (`kakin serve`, `kakin sandbox run`):
/// Apple's `PerformanceTestConfig`, the sandbox's figures for what is not given.
struct RetentionTestOptions: ParsableArguments {
    @Option(
        name: .customLong("retention-test-requests"),
        help: "How many Get Retention Message requests the sandbox's performance test sends (default 100).")
    var requests: Int?
    @Option(
        name: .customLong("retention-test-concurrency"),
        help: "How many of them are in flight at once (default 10).")
    var concurrency: Int?
    @Option(
        name: .customLong("retention-test-seconds"),
        help: "How long the test may send requests, in seconds (default 60).")
    var seconds: Int?

    func validate() throws {
        for (name, value, range) in [
            ("--retention-test-requests", requests, 1...1_000_000), ("--retention-test-concurrency", concurrency, 1...1_000),
            ("--retention-test-seconds", seconds, 1...86_400),
        ] {
            if let value, !range.contains(value) {
                throw ValidationError("\(name) must be between \(range.lowerBound) and \(range.upperBound)")
            }
        }
    }

    /// The test's configuration: what was given over the sandbox's defaults.
    var config: PerformanceTestConfig {
        var config = SandboxRetention.Configuration.defaultPerformanceTest
        config.totalRequests = requests ?? config.totalRequests
        config.maxConcurrentRequests = concurrency ?? config.maxConcurrentRequests
        config.totalDuration = seconds.map { Int64($0) * 1_000 } ?? config.totalDuration
        return config
    }
}
