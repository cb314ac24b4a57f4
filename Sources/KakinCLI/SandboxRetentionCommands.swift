import ArgumentParser
import Foundation

/// `kakin sandbox cancel-page ORIGINAL_TRANSACTION_ID [--locale en-US]`
struct SandboxCancelPageCommand: SandboxControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel-page",
        abstract: "Open the page where a tester may cancel a subscription: the sandbox sends the signed "
            + "Get Retention Message request to the configured real-time URL and prints what the server "
            + "answered, how long it took, whether it was in time, and the message shown.")
    @OptionGroup var connection: SandboxConnectionOptions
    @Argument(help: "The subscription's original transaction ID.") var originalTransactionID: String
    @Option(help: "The device's locale the request carries.") var locale = "en-US"

    func produceOutput() async -> CommandOutput {
        await connection.client.send(
            "POST", ["retention", "cancel-page"],
            body: ["originalTransactionId": originalTransactionID, "locale": locale], done: "sent")
    }
}

/// `kakin sandbox retention-requests`
struct SandboxRetentionRequestsCommand: SandboxControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention-requests",
        abstract: "List the Get Retention Message requests the sandbox sent, oldest first, with their outcomes.")
    @OptionGroup var connection: SandboxConnectionOptions

    func produceOutput() async -> CommandOutput {
        await connection.client.send("GET", ["retention", "requests"], done: "no requests")
    }
}
