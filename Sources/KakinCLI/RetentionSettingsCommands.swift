import AppStoreModels
import ArgumentParser
import Foundation
import KakinServer

/// `kakin retention default get|set|delete PRODUCT LOCALE [MESSAGE]`
struct RetentionDefaultCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "default",
        abstract:
            "Read, set or delete the default message of a product and locale (shown when the server does not answer in time).",
        subcommands: [
            RetentionDefaultGetCommand.self, RetentionDefaultSetCommand.self, RetentionDefaultDeleteCommand.self,
        ])
}

/// The product and locale a default message is for.
struct RetentionDefaultKey: ParsableArguments {
    @Argument(help: "The subscription's product ID.") var product: String
    @Argument(help: "The locale, such as en-US.") var locale: String
}

/// `kakin retention default get PRODUCT LOCALE`
struct RetentionDefaultGetCommand: RetentionAPICommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Print the default message's identifier.")
    @OptionGroup var connection: RetentionConnectionOptions
    @OptionGroup var key: RetentionDefaultKey

    func perform(_ operations: RetentionOperations) async throws(ServerError) -> CommandOutput {
        let answer = try await operations.client.defaultMessage(
            productID: key.product, locale: key.locale, environment: operations.environment)
        return connection.output(answer, text: answer.messageIdentifier ?? "")
    }
}

/// `kakin retention default set PRODUCT LOCALE MESSAGE`
struct RetentionDefaultSetCommand: RetentionAPICommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Make an approved message the default of a product and locale.")
    @OptionGroup var connection: RetentionConnectionOptions
    @OptionGroup var key: RetentionDefaultKey
    @Argument(help: "The message's identifier.") var message: String

    func perform(_ operations: RetentionOperations) async throws(ServerError) -> CommandOutput {
        let identifier = try RetentionOperations.uuid(message, "the message identifier")
        try await operations.client.configureDefaultMessage(
            productID: key.product, locale: key.locale, messageIdentifier: identifier,
            environment: operations.environment)
        return CommandOutput(
            standardOutput: "the default message of \(key.product) in \(key.locale) is \(identifier.appleText)")
    }
}

/// `kakin retention default delete PRODUCT LOCALE`
struct RetentionDefaultDeleteCommand: RetentionAPICommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Remove the default message.")
    @OptionGroup var connection: RetentionConnectionOptions
    @OptionGroup var key: RetentionDefaultKey

    func perform(_ operations: RetentionOperations) async throws(ServerError) -> CommandOutput {
        try await operations.client.deleteDefaultMessage(
            productID: key.product, locale: key.locale, environment: operations.environment)
        return CommandOutput(standardOutput: "deleted the default message of \(key.product) in \(key.locale)")
    }
}

/// `kakin retention realtime-url get|set|delete`
struct RetentionRealtimeURLCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "realtime-url",
        abstract:
            "Read, set or delete the URL the App Store asks which message to show (the server's /v1/retention/apple).",
        subcommands: [
            RetentionRealtimeURLGetCommand.self, RetentionRealtimeURLSetCommand.self,
            RetentionRealtimeURLDeleteCommand.self,
        ])
}

/// `kakin retention realtime-url get`
struct RetentionRealtimeURLGetCommand: RetentionAPICommand {
    static let configuration = CommandConfiguration(commandName: "get", abstract: "Print the real-time URL.")
    @OptionGroup var connection: RetentionConnectionOptions

    func perform(_ operations: RetentionOperations) async throws(ServerError) -> CommandOutput {
        let answer = try await operations.client.realtimeURL(environment: operations.environment)
        return connection.output(answer, text: answer.realtimeURL ?? "")
    }
}

/// `kakin retention realtime-url set URL`
struct RetentionRealtimeURLSetCommand: RetentionAPICommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Set the real-time URL (production needs a passed performance test first).")
    @OptionGroup var connection: RetentionConnectionOptions
    @Argument(help: "The absolute https URL of the server's Get Retention Message endpoint.") var url: String

    func perform(_ operations: RetentionOperations) async throws(ServerError) -> CommandOutput {
        guard let parsed = URL(string: url), parsed.scheme != nil, parsed.host != nil else {
            throw ServerError(.invalidRequest, "the real-time URL must be absolute; found \(url)")
        }
        try await operations.client.configureRealtimeURL(parsed, environment: operations.environment)
        return CommandOutput(standardOutput: "the real-time URL is \(parsed.absoluteString)")
    }
}

/// `kakin retention realtime-url delete`
struct RetentionRealtimeURLDeleteCommand: RetentionAPICommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Remove the real-time URL.")
    @OptionGroup var connection: RetentionConnectionOptions

    func perform(_ operations: RetentionOperations) async throws(ServerError) -> CommandOutput {
        try await operations.client.deleteRealtimeURL(environment: operations.environment)
        return CommandOutput(standardOutput: "deleted the real-time URL")
    }
}

/// `kakin retention performance-test start|result`
struct RetentionPerformanceTestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "performance-test",
        abstract: "Run Apple's performance test of the real-time URL (sandbox environment), and read its result.",
        subcommands: [RetentionPerformanceStartCommand.self, RetentionPerformanceResultCommand.self])
}

/// How `--wait` polls a performance test's result.
struct RetentionPollOptions: ParsableArguments {
    @Flag(help: "Poll the result until it is no longer PENDING.") var wait = false
    @Option(help: "With --wait: the most results read before giving up.") var polls = 60
    @Option(help: "With --wait: seconds between two reads.") var interval = 5

    func validate() throws {
        guard polls > 0, interval >= 0 else {
            throw ValidationError("--polls must be 1 or more and --interval 0 or more")
        }
    }

    /// The result of `requestID`, read again while it is pending when `--wait` is given.
    func result(
        _ requestID: String, _ operations: RetentionOperations
    ) async throws(ServerError) -> PerformanceTestResultResponse {
        var result = try await operations.client.performanceTestResult(requestID: requestID)
        var read = 1
        while wait, result.result == .pending || result.result == nil {
            guard read < polls else {
                throw ServerError(
                    .appleUnavailable, "the performance test \(requestID) is still PENDING after \(read) reads")
            }
            do { try await Task.sleep(for: .seconds(interval)) } catch {
                throw ServerError(.appleUnavailable, "the wait for the performance test was cancelled")
            }
            result = try await operations.client.performanceTestResult(requestID: requestID)
            read += 1
        }
        return result
    }

    /// A result in a few lines: the verdict, the success rate, the response times, the failures.
    static func text(_ result: PerformanceTestResultResponse) -> String {
        var lines = [
            "\(result.result?.rawValue ?? "?"): \(result.successRate ?? 0) % succeeded"
                + " (\(result.config?.successRateThreshold ?? 0) % needed), \(result.numPending ?? 0) pending"
        ]
        if let times = result.responseTimes {
            lines.append(
                "response times (ms): average \(times.average ?? 0), p50 \(times.p50 ?? 0), p90 \(times.p90 ?? 0), "
                    + "p95 \(times.p95 ?? 0), p99 \(times.p99 ?? 0)")
        }
        for (reason, count) in (result.failures ?? [:]).sorted(by: { $0.key < $1.key }) where count > 0 {
            lines.append("failed \(reason): \(count)")
        }
        if let target = result.target { lines.append("target: \(target)") }
        return lines.joined(separator: "\n")
    }
}

/// `kakin retention performance-test start ORIGINAL_TRANSACTION_ID [--wait]`
struct RetentionPerformanceStartCommand: RetentionAPICommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Start the performance test against the sandbox real-time URL; prints the request ID.")
    @OptionGroup var connection: RetentionConnectionOptions
    @Argument(help: "A sandbox subscription's original transaction ID, which the test's requests name.")
    var originalTransactionID: String
    @OptionGroup var poll: RetentionPollOptions

    func perform(_ operations: RetentionOperations) async throws(ServerError) -> CommandOutput {
        let started = try await operations.client.initiatePerformanceTest(originalTransactionID: originalTransactionID)
        guard let requestID = started.requestID else {
            throw ServerError(.appleUnavailable, "Apple started a performance test without a request ID")
        }
        let config = started.config
        var text =
            "started performance test \(requestID): \(config?.totalRequests ?? 0) requests, "
            + "\(config?.maxConcurrentRequests ?? 0) at a time, each answered within "
            + "\(config?.responseTimeThreshold ?? 0) ms, \(config?.successRateThreshold ?? 0) % to pass"
        guard poll.wait else { return connection.output(started, text: text) }
        let result = try await poll.result(requestID, operations)
        text += "\n" + RetentionPollOptions.text(result)
        return connection.output(result, text: text)
    }
}

/// `kakin retention performance-test result REQUEST_ID [--wait]`
struct RetentionPerformanceResultCommand: RetentionAPICommand {
    static let configuration = CommandConfiguration(
        commandName: "result", abstract: "Print a performance test's result (PENDING, PASS or FAIL).")
    @OptionGroup var connection: RetentionConnectionOptions
    @Argument(help: "The request ID `start` printed.") var requestID: String
    @OptionGroup var poll: RetentionPollOptions

    func perform(_ operations: RetentionOperations) async throws(ServerError) -> CommandOutput {
        let result = try await poll.result(requestID, operations)
        return connection.output(result, text: RetentionPollOptions.text(result))
    }
}
