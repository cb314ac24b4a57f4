/// The body of `POST /v1/transactions`: a signed transaction (StoreKit 2's `jwsRepresentation`)
/// for a customer. The server verifies it, records it once by transaction ID and answers the
/// customer.
public struct TransactionSubmission: Codable, Hashable, Sendable {
    /// The app's bundle ID; must match the transaction's.
    public var bundleId: String
    /// Your app's user ID for the customer.
    public var appUserId: String
    /// The JWS of the transaction.
    public var signedTransaction: String
    /// The JWS of the device's app transaction (StoreKit's `AppTransaction`), sent with restored
    /// transactions and with those the app did not just buy: the proof that this device is signed
    /// in to the Apple Account that bought the transaction. Under the transfer policy
    /// `transferToNewUser`, a purchase another customer owns moves to the uploader only when this
    /// app transaction's `appTransactionId` is the transaction's, or when the transaction's
    /// `appAccountToken` is the uploader's own.
    public var signedAppTransaction: String?

    /// Creates a submission.
    public init(bundleId: String, appUserId: String, signedTransaction: String, signedAppTransaction: String? = nil) {
        self.bundleId = bundleId
        self.appUserId = appUserId
        self.signedTransaction = signedTransaction
        self.signedAppTransaction = signedAppTransaction
    }
}

/// The body of `POST /v1/receipts`: a base64 app receipt, verified through Apple's verifyReceipt.
public struct ReceiptSubmission: Codable, Hashable, Sendable {
    /// The app's bundle ID; must match the receipt's.
    public var bundleId: String
    /// Your app's user ID for the customer.
    public var appUserId: String
    /// The app receipt, base64.
    public var receipt: String
    /// The transaction the app is delivering, when it knows it.
    public var transactionId: String?

    /// Creates a submission.
    public init(bundleId: String, appUserId: String, receipt: String, transactionId: String? = nil) {
        self.bundleId = bundleId
        self.appUserId = appUserId
        self.receipt = receipt
        self.transactionId = transactionId
    }
}

/// The body of a spend: take `amount` of a balance, once per `idempotencyKey`.
public struct SpendRequest: Codable, Hashable, Sendable {
    /// The app the balance belongs to.
    public var bundleId: String
    /// How much to take from the balance.
    public var amount: Int64
    /// The same key spends once, however often the request is sent.
    public var idempotencyKey: String

    /// Creates a spend request.
    public init(bundleId: String, amount: Int64, idempotencyKey: String) {
        self.bundleId = bundleId
        self.amount = amount
        self.idempotencyKey = idempotencyKey
    }
}

/// What a spend did: `spent` now, or `alreadySpent` by an earlier request with the same key.
public struct SpendAnswer: Codable, Hashable, Sendable {
    /// `spent`, or `alreadySpent` when an earlier request with the same key did it.
    public var status: String
    /// The balance after the spend.
    public var balance: Int64

    /// Creates a spend answer.
    public init(status: String, balance: Int64) {
        self.status = status
        self.balance = balance
    }
}

/// What the server did with an Apple notification: `processed` (with its type) or `duplicate`.
public struct NotificationAnswer: Codable, Hashable, Sendable {
    /// `processed`, or `duplicate` for a notification already handled.
    public var status: String
    /// The notification's type (e.g. `DID_RENEW`), when processed.
    public var notificationType: String?

    /// Creates a notification answer.
    public init(status: String, notificationType: String? = nil) {
        self.status = status
        self.notificationType = notificationType
    }
}

/// Every failure's body: `{"error": {"code", "message", "retryable", "cause"?, "appleStatus"?}}`.
public struct ErrorAnswer: Codable, Hashable, Sendable {
    /// One failure.
    public struct Detail: Codable, Hashable, Sendable {
        /// What went wrong, e.g. `verificationFailed`, `conflict`, `unauthorized`.
        public var code: String
        /// A sentence for people.
        public var message: String
        /// Whether the same request may succeed later; a client mistake never is.
        public var retryable: Bool
        /// A verification failure's cause, e.g. `badSignature`, `untrustedChain`.
        public var cause: String?
        /// The status Apple's verifyReceipt answered, for receipt failures.
        public var appleStatus: Int?

        /// Creates a failure detail.
        public init(code: String, message: String, retryable: Bool, cause: String? = nil, appleStatus: Int? = nil) {
            self.code = code
            self.message = message
            self.retryable = retryable
            self.cause = cause
            self.appleStatus = appleStatus
        }
    }

    /// The failure.
    public var error: Detail

    /// Creates an error body.
    public init(error: Detail) { self.error = error }
}

/// The body of `POST /v1/customers/{user}/app-transaction`: the app transaction of the install the
/// customer uses (StoreKit's `AppTransaction.shared`, as its JWS), so that purchases of this
/// download that reach the server without an owner are given to this customer.
public struct AppTransactionSubmission: Codable, Hashable, Sendable {
    /// The app's bundle ID; must match the app transaction's.
    public var bundleId: String
    /// The JWS of the app transaction (`jwsRepresentation`).
    public var signedAppTransaction: String

    /// Creates a submission.
    public init(bundleId: String, signedAppTransaction: String) {
        self.bundleId = bundleId
        self.signedAppTransaction = signedAppTransaction
    }
}

/// What `POST /v1/customers/{user}/app-transaction` linked: the download and its customer.
public struct LinkedAppTransaction: Codable, Hashable, Sendable {
    /// The app download's ID (`appTransactionId`).
    public var appTransactionId: String
    /// The customer it is linked to now.
    public var appUserId: String

    /// Creates an answer.
    public init(appTransactionId: String, appUserId: String) {
        self.appTransactionId = appTransactionId
        self.appUserId = appUserId
    }
}
