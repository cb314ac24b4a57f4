public import ArgumentParser

/// `kakin`: the command line of the Kakin in-app purchase system.
public struct KakinCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "kakin",
        abstract: "Kakin (課金): Apple's in-app purchase formats, a local App Store and a purchase server.",
        version: BuildInfo.versionLine,
        subcommands: [
            ServeCommand.self, ServerCommand.self, SandboxCommand.self, TokenCommand.self, DemoCommand.self,
            JWSCommand.self, ReceiptCommand.self, CatalogCommand.self, MintCommand.self,
            CACommand.self, HealthCommand.self, RetentionCommand.self,
        ]
    )

    public init() {}

    /// Runs the command line; failures print one line and exit non-zero, never a stack trace.
    public static func run(arguments: [String]? = nil) async {
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as ExitCodeError {
            Self.exit(withError: ExitCode(error.code))
        } catch {
            Self.exit(withError: error)
        }
    }
}
