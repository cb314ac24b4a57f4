public import Foundation

extension VerifyReceiptReceipt {
    /// The kind of receipt in `receipt_type`.
    public struct ReceiptType: WireEnum {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Bought on the App Store.
        public static let production = Self(rawValue: "Production")
        /// Bought through Apple's volume purchase program.
        public static let productionVPP = Self(rawValue: "ProductionVPP")
        /// Made in the sandbox.
        public static let productionSandbox = Self(rawValue: "ProductionSandbox")
        /// Made through the volume purchase program in the sandbox.
        public static let productionVPPSandbox = Self(rawValue: "ProductionVPPSandbox")

        public static let knownValues: [Self] = [
            .production, .productionVPP, .productionSandbox, .productionVPPSandbox,
        ]

        /// The environment the receipt belongs to: sandbox for the two sandbox kinds, production for
        /// the other two, `nil` for a kind this version does not know.
        public var environment: AppStoreEnvironment? {
            switch self {
            case .production, .productionVPP: .production
            case .productionSandbox, .productionVPPSandbox: .sandbox
            default: nil
            }
        }
    }

    /// When the receipt was created; setting it fills all three `receipt_creation_date` keys.
    public var receiptCreationDate: Date? {
        get { VerifyReceiptDate.date(milliseconds: receiptCreationDateMS, gmt: receiptCreationDateGMT) }
        set {
            (receiptCreationDateGMT, receiptCreationDateMS, receiptCreationDatePST) =
                VerifyReceiptDate.fields(newValue)
        }
    }

    /// When verifyReceipt handled the request; setting it fills all three `request_date` keys.
    public var requestDate: Date? {
        get { VerifyReceiptDate.date(milliseconds: requestDateMS, gmt: requestDateGMT) }
        set { (requestDateGMT, requestDateMS, requestDatePST) = VerifyReceiptDate.fields(newValue) }
    }

    /// When the customer first got the app; setting it fills all three `original_purchase_date` keys.
    public var originalPurchaseDate: Date? {
        get { VerifyReceiptDate.date(milliseconds: originalPurchaseDateMS, gmt: originalPurchaseDateGMT) }
        set {
            (originalPurchaseDateGMT, originalPurchaseDateMS, originalPurchaseDatePST) =
                VerifyReceiptDate.fields(newValue)
        }
    }

    /// When the customer pre-ordered the app; setting it fills all three `preorder_date` keys.
    public var preorderDate: Date? {
        get { VerifyReceiptDate.date(milliseconds: preorderDateMS, gmt: preorderDateGMT) }
        set { (preorderDateGMT, preorderDateMS, preorderDatePST) = VerifyReceiptDate.fields(newValue) }
    }

    /// When a volume purchase receipt expires; setting it fills all three `expiration_date` keys.
    public var expirationDate: Date? {
        get { VerifyReceiptDate.date(milliseconds: expirationDateMS, gmt: expirationDateGMT) }
        set { (expirationDateGMT, expirationDateMS, expirationDatePST) = VerifyReceiptDate.fields(newValue) }
    }
}
