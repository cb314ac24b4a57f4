import AppStoreModels
import ArgumentParser
import Foundation
import KakinServer

/// `kakin retention`: an app's Retention Messaging, managed through Apple's API (or the embedded
/// sandbox's under `kakin serve`): messages, images, default messages, the real-time URL, the
/// performance test, and previews.
struct RetentionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention",
        abstract: "Manage an app's Retention Messaging: messages, images, default messages, the real-time URL.",
        discussion: """
            With --config FILE (env KAKIN_CONFIG), the app of a production server's configuration \
            (--bundle-id when it has several) is managed with its In-App Purchase key \
            (appStoreServerAPI) at Apple's hosts (or its endpoints), in --environment production by \
            default. Without it, the app of a `kakin serve` started with --data DIR (env KAKIN_DATA, \
            default ./kakin-data) is managed in its embedded sandbox at --host and --sandbox-port. A \
            refusal prints one line with Apple's error code and exits 1.
            """,
        subcommands: [
            RetentionMessagesCommand.self, RetentionImagesCommand.self, RetentionDefaultCommand.self,
            RetentionRealtimeURLCommand.self, RetentionPerformanceTestCommand.self, RetentionPreviewCommand.self,
        ])
}

/// Where `kakin retention` reaches the Retention Messaging API, and for which app.
struct RetentionConnectionOptions: ParsableArguments {
    @Option(help: "A production server's JSON configuration file (env KAKIN_CONFIG).") var config: String?
    @Option(name: .customLong("bundle-id"), help: "The app (needed when the configuration has several).")
    var bundleID: String?
    @Option(help: "sandbox or production (default: production with --config, else sandbox).")
    var environment: String?
    @Option(help: "Without --config: the data directory of kakin serve (env KAKIN_DATA; default ./kakin-data).")
    var data: String?
    @Option(help: "Without --config: the host kakin serve listens on.") var host = "127.0.0.1"
    @Option(name: .customLong("sandbox-port"), help: "Without --config: the embedded sandbox's port.")
    var sandboxPort = 8081
    @Flag(help: "Print Apple's answers as JSON.") var json = false

    func validate() throws {
        if let environment, RetentionOperations.environment(named: environment) == nil {
            throw ValidationError("--environment must be sandbox or production; found \(environment)")
        }
    }

    /// The configuration file named by `--config` or `KAKIN_CONFIG`; `nil` under `kakin serve`.
    var configPath: String? { config ?? ProcessInfo.processInfo.environment["KAKIN_CONFIG"] }

    /// The app to manage, with the key and hosts to reach its messages with.
    func app() throws(ServerError) -> AppConfiguration {
        if let path = configPath {
            let configuration = try ServerConfiguration.load(contentsOf: URL(fileURLWithPath: path))
            do { return try configuration.appConfiguration(bundleID: bundleID) } catch {
                throw ServerError(error)
            }
        }
        let data = data ?? ProcessInfo.processInfo.environment["KAKIN_DATA"] ?? ServeEnvironment.Options().data
        let access = try ServeEnvironment.existingServerAPIAccess(data: data, host: host, sandboxPort: sandboxPort)
        return AppConfiguration(
            bundleID: bundleID ?? ServeEnvironment.Options().bundleID, environments: [.sandbox], publicKey: "",
            secretKey: "", serverAPI: access)
    }

    /// The operations on the app's messages in the environment asked for.
    func operations() throws(ServerError) -> RetentionOperations {
        let app = try app()
        let named = environment.flatMap(RetentionOperations.environment(named:))
        return try RetentionOperations(
            app: app, environment: named ?? app.defaultEnvironment,
            exchange: URLSessionExchange())
    }

    /// `value` as the command prints it: pretty JSON with `--json`, else `text`.
    func output(_ value: some Encodable, text: String) -> CommandOutput {
        CommandOutput(standardOutput: json ? PrettyJSON.string(encoding: value) : text)
    }

    /// A failure in one line: `error: <code> [<Apple's error code>]: <message>`.
    static func failure(_ error: ServerError) -> CommandOutput {
        .failure("error: \(error.code)\(error.appleStatus.map { " \($0)" } ?? ""): \(error.message)")
    }
}

/// A `kakin retention` subcommand that calls the Retention Messaging API.
protocol RetentionAPICommand: AsyncParsableCommand, OutputProducingCommand {
    var connection: RetentionConnectionOptions { get }
    /// What the command does with the app's operations, and what it prints.
    func perform(_ operations: RetentionOperations) async throws(ServerError) -> CommandOutput
}

extension RetentionAPICommand {
    func run() async throws { try await emit() }

    func produceOutput() async -> CommandOutput {
        do { return try await perform(try connection.operations()) } catch {
            return RetentionConnectionOptions.failure(error)
        }
    }
}

extension UUID {
    /// The identifier as Apple writes it: lowercase.
    var appleText: String { uuidString.lowercased() }
}
