import AppStoreSecurity
import ArgumentParser
import Foundation

/// `kakin receipt`: app receipts.
struct ReceiptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipt", abstract: "Inspect PKCS#7 app receipts.", subcommands: [])
}
