import ArgumentParser
import Foundation
import KakinServer

/// `kakin retention preview [ORIGINAL_TRANSACTION_ID] [--locale L] [--header H --body B … | --file F]`
struct RetentionPreviewCommand: AsyncParsableCommand, OutputProducingCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract:
            "Show how a message reads on the cancel page, or what the configured rules would answer for a subscription.",
        discussion: """
            With --header and --body (or --file), the message's lines as the page shows them, and what \
            Apple would refuse in it. With ORIGINAL_TRANSACTION_ID, the subscriber as the server's rules \
            read it from the ledger of --config, the rule that matches and what it shows; nothing is \
            recorded and nothing is sent to Apple.
            """)
    @OptionGroup var connection: RetentionConnectionOptions
    @OptionGroup var message: RetentionMessageOptions
    @Argument(help: "A subscription's original transaction ID, for the rules preview.") var originalTransactionID:
        String?
    @Option(help: "The locale the App Store's request would carry.") var locale = "en-US"

    func run() async throws { try await emit() }

    func produceOutput() async -> CommandOutput {
        guard message.given || originalTransactionID != nil else {
            return .failure("error: give a message (--header and --body, or --file) or an original transaction ID")
        }
        var sections: [String] = []
        do {
            if message.given { sections.append(RetentionMessagePreview(try message.message()).text) }
            if let originalTransactionID { sections.append(try await rules(originalTransactionID)) }
        } catch {
            return RetentionConnectionOptions.failure(ServerError(error))
        }
        return CommandOutput(standardOutput: sections.joined(separator: "\n\n"))
    }

    /// The rules preview, read from the ledger of the configuration.
    private func rules(_ originalTransactionID: String) async throws -> String {
        guard let path = connection.configPath else {
            throw ServerError(
                .invalidRequest, "the rules preview reads a server's ledger and rules: give --config FILE")
        }
        let configuration = try ServerConfiguration.load(contentsOf: URL(fileURLWithPath: path))
        let bundleID = try configuration.appConfiguration(bundleID: connection.bundleID).bundleID
        let preview = try await configuration.withService { service in
            try await service.previewRetention(
                bundleID: bundleID, originalTransactionID: originalTransactionID, locale: locale)
        }
        return preview.lines.joined(separator: "\n")
    }
}
