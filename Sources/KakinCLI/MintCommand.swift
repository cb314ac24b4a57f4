import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import ArgumentParser
import Foundation
import KakinWire
import StoreSandbox

/// `kakin mint`: signed transactions made with a sandbox CA, as request bodies for load tests.
struct MintCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mint",
        abstract: "Sign sandbox transactions as load-test request bodies, one JSON object per line.",
        discussion: """
            Signs COUNT distinct transactions of PRODUCT with the sandbox CA of `kakin serve` \
            (DATA/sandbox/ca), exactly as the sandbox App Store signs them, without recording purchases \
            anywhere. Each line is a body for POST /v1/transactions, for customers load-1, load-2, … \
            (--users of them, round robin by transaction ID). A server that trusts the CA records them like any purchase.
            """)

    @Option(help: "The data directory of `kakin serve`.") var data: String = "kakin-data"
    @Option(help: "How many transactions.") var count: Int = 1000
    @Option(help: "The product.") var product: String = "com.example.kakin.increasePoints"
    @Option(help: "The product's type: Consumable, Non-Consumable, …") var type: String = "Consumable"
    @Option(help: "How many customers the purchases are spread over.") var users: Int = 1000
    @Option(name: .customLong("bundle-id"), help: "The app's bundle ID.") var bundleID: String = "com.example.kakin"
    @Option(name: .customLong("app-apple-id"), help: "The app's App Store ID.") var appAppleID: Int64 = 6_450_000_001
    @Option(help: "The first transaction ID (distinct runs need distinct ranges).") var first: Int64 = 9_000_000_000_000_001
    @Option(help: "Write to FILE instead of standard output.") var out: String?

    func run() async throws {
        guard count > 0, users > 0 else { throw ValidationError("--count and --users must be positive") }
        let caDirectory = URL(fileURLWithPath: data).appendingPathComponent("sandbox").appendingPathComponent("ca")
        guard FileManager.default.fileExists(atPath: caDirectory.path) else {
            throw ValidationError("\(caDirectory.path) has no CA: start kakin serve with --data \(data) first")
        }
        let signer = SandboxSigner(
            authority: try SandboxCertificateAuthority.loadOrCreate(in: caDirectory), bundleID: bundleID,
            appAppleID: appAppleID)
        // Whole milliseconds, as the App Store signs dates.
        let now = Date(epochMilliseconds: Date().epochMilliseconds)
        let encoder = KakinJSON.encoder()
        var output = Data()
        output.reserveCapacity(count * 2_600)
        for index in 0..<count {
            let id = String(first + Int64(index))
            // By transaction ID, so that runs over consecutive ranges go on where the last one stopped.
            let user = "load-\((first + Int64(index)) % Int64(users) + 1)"
            // The token the SDK would give the purchase, so the server has nothing to set.
            let transaction = SandboxTransaction(
                id: id, originalID: id, testerID: "load", productID: product, productType: ProductType(rawValue: type),
                purchaseDate: now, originalPurchaseDate: now,
                appAccountToken: AppAccountToken.derived(from: user).uuidString.lowercased(), storefront: "USA",
                storefrontID: "143441", currency: "USD", priceMilliunits: 990, appTransactionID: "load")
            let body = TransactionSubmission(
                bundleId: bundleID, appUserId: user,
                signedTransaction: try signer.signTransaction(transaction, at: now))
            output.append(try encoder.encode(body))
            output.append(0x0A)
        }
        if let out {
            try output.write(to: URL(fileURLWithPath: out), options: .atomic)
        } else {
            FileHandle.standardOutput.write(output)
        }
    }
}
