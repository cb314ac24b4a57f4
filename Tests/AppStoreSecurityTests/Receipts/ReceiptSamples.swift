import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Foundation

/// Receipts and helpers shared by the receipt tests.
enum ReceiptSamples {
    /// The creation date of the sample receipts: 2025-03-01T12:00:00Z.
    static let creationDate = Date(timeIntervalSince1970: 1_740_830_400)

    /// The sample device: a fixed `identifierForVendor`.
    static let deviceUUID = UUID(uuidString: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")!

    /// A payload that uses every attribute kind: strings, integers, flags, dates (one with
    /// milliseconds), raw bytes, an unknown attribute, and three in-app purchases.
    static func fullReceipt() -> AppReceipt {
        let day: TimeInterval = 86_400
        return AppReceipt(
            receiptType: .productionSandbox,
            appItemID: 0,
            bundleID: "com.example.kakin.sample",
            applicationVersion: "42",
            opaqueValue: Data((0..<16).map { UInt8($0 * 7 + 3) }),
            sha1Hash: Data(repeating: 0xAB, count: 20),
            ageRating: "4+",
            creationDate: creationDate,
            downloadID: 1_234_567,
            versionExternalIdentifier: 857_123_456,
            inAppPurchases: [
                InAppPurchaseReceipt(
                    quantity: 1, productID: "com.example.coins.100", transactionID: "2000000000000001",
                    purchaseDate: creationDate.addingTimeInterval(-30 * day),
                    originalTransactionID: "2000000000000001",
                    originalPurchaseDate: creationDate.addingTimeInterval(-30 * day),
                    productType: 0),
                InAppPurchaseReceipt(
                    quantity: 1, productID: "com.example.premium.monthly", transactionID: "2000000000000007",
                    purchaseDate: creationDate.addingTimeInterval(-2 * day),
                    originalTransactionID: "2000000000000002",
                    originalPurchaseDate: creationDate.addingTimeInterval(-60 * day + 0.25),
                    productType: 3,
                    expiresDate: creationDate.addingTimeInterval(28 * day),
                    webOrderLineItemID: 2_000_000_012_345,
                    isTrialPeriod: false, isInIntroOfferPeriod: true,
                    promotionalOfferIdentifier: "WINBACK2025"),
                InAppPurchaseReceipt(
                    quantity: 3, productID: "com.example.coins.500", transactionID: "2000000000000009",
                    purchaseDate: creationDate.addingTimeInterval(-day),
                    cancellationDate: creationDate.addingTimeInterval(-day / 2),
                    otherAttributes: [ReceiptAttribute(type: 1725, value: Data([0x0C, 0x00]))]),
            ],
            originalPurchaseDate: creationDate.addingTimeInterval(-365 * day),
            originalApplicationVersion: "1.0",
            expirationDate: creationDate.addingTimeInterval(365 * day),
            otherAttributes: [ReceiptAttribute(type: 8, value: Data([0x16, 0x00]))]
        )
    }

    /// A fresh authority whose certificates are valid at ``creationDate``.
    static func authority(name: String = "Kakin Receipt Tests") throws -> SandboxCertificateAuthority {
        try SandboxCertificateAuthority.generate(name: name, now: creationDate)
    }

    /// A deterministic generator, so random-input tests are repeatable.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var value = state
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            return value ^ (value >> 31)
        }
    }
}
