import Foundation

// The Stripe objects Kakin reads, with only the fields it needs, in the shape of API version
// `StripeClient.apiVersion`. Amounts are in the currency's minor units (cents), currencies are
// Stripe's lowercase ISO codes, and times (Unix seconds on the wire) are `Date`s. Fields Stripe
// documents as nullable are optionals; any other field in Stripe's answer is ignored. A field
// Stripe can "expand" (send as the object instead of its id, such as `customer`) is read as the
// id either way.

/// One page of a Stripe list: its objects, and whether more follow.
struct StripeList<Element: Decodable & Sendable>: Decodable, Sendable {
    /// The objects of this page, in Stripe's order.
    var data: [Element]
    /// Whether more objects follow this page: ask again with `starting_after` set to the last
    /// object's id.
    var hasMore: Bool

    enum CodingKeys: String, CodingKey {
        case data
        case hasMore = "has_more"
    }
}

extension StripeList: Equatable where Element: Equatable {}
extension StripeList: Hashable where Element: Hashable {}

/// A Stripe customer.
struct StripeCustomer: Decodable, Sendable, Hashable {
    var id: String
    var email: String?
    var metadata: [String: String]
    var created: Date
    /// The payment method Stripe charges for the customer's invoices (`invoice_settings`), if any.
    var defaultPaymentMethod: String?

    enum CodingKeys: String, CodingKey {
        case id, email, metadata, created
        case invoiceSettings = "invoice_settings"
    }

    enum InvoiceSettingsKeys: String, CodingKey {
        case defaultPaymentMethod = "default_payment_method"
    }

    /// Reads a customer, its default payment method as an id even when expanded.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        metadata = try container.decodeMetadata(forKey: .metadata)
        created = try container.decode(Date.self, forKey: .created)
        if container.contains(.invoiceSettings), try !container.decodeNil(forKey: .invoiceSettings) {
            let settings = try container.nestedContainer(keyedBy: InvoiceSettingsKeys.self, forKey: .invoiceSettings)
            defaultPaymentMethod = try settings.decodeExpandableID(forKey: .defaultPaymentMethod)
        }
    }
}

/// A payment method: a card, as far as Kakin is concerned.
struct StripePaymentMethod: Decodable, Sendable, Hashable {
    var id: String
    /// The kind of payment method (`card`…).
    var type: String
    /// The customer it is attached to, if any.
    var customer: String?
    /// The last four digits of a card's number.
    var cardLast4: String?

    enum CodingKeys: String, CodingKey {
        case id, type, customer, card
    }

    enum CardKeys: String, CodingKey {
        case last4
    }

    /// Reads a payment method, its customer as an id even when expanded.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        type = try container.decode(String.self, forKey: .type)
        customer = try container.decodeExpandableID(forKey: .customer)
        if container.contains(.card), try !container.decodeNil(forKey: .card) {
            cardLast4 = try container.nestedContainer(keyedBy: CardKeys.self, forKey: .card)
                .decodeIfPresent(String.self, forKey: .last4)
        }
    }
}

/// A payment intent: one payment, from creation through confirmation to success or failure.
struct StripePaymentIntent: Decodable, Sendable, Hashable {
    /// Where a payment intent stands; values Stripe adds later are kept as they are.
    struct Status: RawRepresentable, Decodable, Sendable, Hashable {
        var rawValue: String
        init(rawValue: String) { self.rawValue = rawValue }

        static let requiresPaymentMethod = Status(rawValue: "requires_payment_method")
        static let requiresConfirmation = Status(rawValue: "requires_confirmation")
        static let requiresAction = Status(rawValue: "requires_action")
        static let processing = Status(rawValue: "processing")
        static let requiresCapture = Status(rawValue: "requires_capture")
        static let canceled = Status(rawValue: "canceled")
        static let succeeded = Status(rawValue: "succeeded")
    }

    /// Why the last attempt to pay failed.
    struct PaymentError: Decodable, Sendable, Hashable {
        var code: String?
        var declineCode: String?
        var message: String?

        enum CodingKeys: String, CodingKey {
            case code, message
            case declineCode = "decline_code"
        }
    }

    var id: String
    var status: Status
    var amount: Int
    var currency: String
    var customer: String?
    var paymentMethod: String?
    /// The charge of the latest attempt to pay: `latest_charge`, or the first of `charges` in
    /// an answer of an older shape.
    var latestCharge: String?
    var description: String?
    var metadata: [String: String]
    var created: Date
    /// Why the last attempt to pay failed, while the intent waits for another payment method.
    var lastPaymentError: PaymentError?
    /// The invoice the intent pays, for a subscription's payment; `nil` for a payment of its own.
    var invoice: String?
    /// The secret Stripe.js confirms the payment with in the customer's browser (`pi_…_secret_…`).
    var clientSecret: String?

    enum CodingKeys: String, CodingKey {
        case id, status, amount, currency, customer, description, metadata, created, charges, invoice
        case clientSecret = "client_secret"
        case paymentMethod = "payment_method"
        case latestCharge = "latest_charge"
        case lastPaymentError = "last_payment_error"
    }

    /// Reads a payment intent, its expandable fields as ids.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        status = try container.decode(Status.self, forKey: .status)
        amount = try container.decode(Int.self, forKey: .amount)
        currency = try container.decode(String.self, forKey: .currency)
        customer = try container.decodeExpandableID(forKey: .customer)
        paymentMethod = try container.decodeExpandableID(forKey: .paymentMethod)
        latestCharge = try container.decodeExpandableID(forKey: .latestCharge)
        if latestCharge == nil,
            let charges = try container.decodeIfPresent(StripeList<StripeObjectID>.self, forKey: .charges)
        {
            latestCharge = charges.data.first?.id
        }
        description = try container.decodeIfPresent(String.self, forKey: .description)
        metadata = try container.decodeMetadata(forKey: .metadata)
        created = try container.decode(Date.self, forKey: .created)
        lastPaymentError = try container.decodeIfPresent(PaymentError.self, forKey: .lastPaymentError)
        invoice = try container.decodeExpandableID(forKey: .invoice)
        clientSecret = try container.decodeIfPresent(String.self, forKey: .clientSecret)
    }
}

/// A charge: one attempt to take a payment, and what was refunded or disputed of it.
struct StripeCharge: Decodable, Sendable, Hashable {
    var id: String
    /// What was charged, in minor units of ``currency``.
    var amount: Int
    /// How much of it was refunded so far, in minor units.
    var amountRefunded: Int
    var currency: String
    var customer: String?
    /// The payment intent the charge paid.
    var paymentIntent: String?
    /// The invoice the charge paid, for a subscription's payment (older API versions only; newer
    /// ones reach it through the payment intent).
    var invoice: String?
    /// Whether the charge was disputed.
    var disputed: Bool
    var created: Date

    enum CodingKeys: String, CodingKey {
        case id, amount, currency, customer, invoice, disputed, created
        case amountRefunded = "amount_refunded"
        case paymentIntent = "payment_intent"
    }

    /// Reads a charge, its expandable fields as ids.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        amount = try container.decode(Int.self, forKey: .amount)
        amountRefunded = try container.decodeIfPresent(Int.self, forKey: .amountRefunded) ?? 0
        currency = try container.decode(String.self, forKey: .currency)
        customer = try container.decodeExpandableID(forKey: .customer)
        paymentIntent = try container.decodeExpandableID(forKey: .paymentIntent)
        invoice = try container.decodeExpandableID(forKey: .invoice)
        disputed = try container.decodeIfPresent(Bool.self, forKey: .disputed) ?? false
        created = try container.decode(Date.self, forKey: .created)
    }
}

/// A dispute: a customer's bank contesting a charge.
struct StripeDispute: Decodable, Sendable, Hashable {
    /// Where a dispute stands; values Stripe adds later are kept as they are.
    struct Status: RawRepresentable, Decodable, Sendable, Hashable {
        var rawValue: String
        init(rawValue: String) { self.rawValue = rawValue }

        /// The bank decided for the customer: the money is gone.
        static let lost = Status(rawValue: "lost")
        static let won = Status(rawValue: "won")
    }

    var id: String
    var status: Status
    /// The disputed amount, in minor units.
    var amount: Int
    var charge: String
    var created: Date

    enum CodingKeys: String, CodingKey {
        case id, status, amount, charge, created
    }

    /// Reads a dispute, its charge as its id.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        status = try container.decode(Status.self, forKey: .status)
        amount = try container.decode(Int.self, forKey: .amount)
        guard let charge = try container.decodeExpandableID(forKey: .charge) else {
            throw DecodingError.valueNotFound(
                String.self, .init(codingPath: [CodingKeys.charge], debugDescription: "a dispute names its charge"))
        }
        self.charge = charge
        created = try container.decode(Date.self, forKey: .created)
    }
}

/// A refund of all or part of a payment.
struct StripeRefund: Decodable, Sendable, Hashable {
    /// Where a refund stands; values Stripe adds later are kept as they are.
    struct Status: RawRepresentable, Decodable, Sendable, Hashable {
        var rawValue: String
        init(rawValue: String) { self.rawValue = rawValue }

        static let pending = Status(rawValue: "pending")
        static let requiresAction = Status(rawValue: "requires_action")
        static let succeeded = Status(rawValue: "succeeded")
        static let failed = Status(rawValue: "failed")
        static let canceled = Status(rawValue: "canceled")
    }

    var id: String
    var status: Status?
    var amount: Int
    var currency: String
    var paymentIntent: String?
    var charge: String?
    var metadata: [String: String]
    var created: Date

    enum CodingKeys: String, CodingKey {
        case id, status, amount, currency, charge, metadata, created
        case paymentIntent = "payment_intent"
    }

    /// Reads a refund, its payment intent and charge as ids even when expanded.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        status = try container.decodeIfPresent(Status.self, forKey: .status)
        amount = try container.decode(Int.self, forKey: .amount)
        currency = try container.decode(String.self, forKey: .currency)
        paymentIntent = try container.decodeExpandableID(forKey: .paymentIntent)
        charge = try container.decodeExpandableID(forKey: .charge)
        metadata = try container.decodeMetadata(forKey: .metadata)
        created = try container.decode(Date.self, forKey: .created)
    }
}

/// Any Stripe object, read for its id alone.
struct StripeObjectID: Decodable, Sendable, Hashable {
    var id: String
}

extension KeyedDecodingContainer {
    /// The id under `key` of an expandable field, whether Stripe sent the id itself or the
    /// expanded object (whose `id` it is); `nil` when the field is missing or null.
    func decodeExpandableID(forKey key: Key) throws -> String? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let id = try? decode(String.self, forKey: key) { return id }
        return try decode(StripeObjectID.self, forKey: key).id
    }

    /// The metadata under `key`: empty when missing or null.
    func decodeMetadata(forKey key: Key) throws -> [String: String] {
        try decodeIfPresent([String: String].self, forKey: key) ?? [:]
    }
}
