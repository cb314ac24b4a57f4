public import Foundation

/// The payload of an app receipt: what `Bundle.main.appStoreReceiptURL` holds inside its PKCS#7
/// signature.
///
/// Each property is one `ReceiptAttribute` of Apple's `SET OF ReceiptAttribute`; its number is
/// given in parentheses. Apple documents bundle ID, app version, opaque value and SHA-1 hash as
/// always present, so they are required; everything else is optional, and an empty string in
/// Apple's encoding reads as `nil`. Attributes this model does not interpret (6, 7, 8, 9, 11, 13,
/// 14, 20, 25, and any new ones) are kept in ``otherAttributes``, so serializing a parsed payload
/// writes every attribute back.
///
/// The model does no verification: AppStoreSecurity checks the signature, the certificate chain
/// and the device hash.
public struct AppReceipt: Codable, Hashable, Sendable {
    /// Which store wrote the receipt (0). Old receipts do not have it.
    public var receiptType: AppReceiptType?
    /// The app's App Store identifier (1); 0 in the sandbox and in Xcode.
    public var appItemID: Int64?
    /// The app's bundle identifier (2).
    public var bundleID: String
    /// The app's version (3): `CFBundleVersion` on iOS, `CFBundleShortVersionString` on macOS.
    public var applicationVersion: String
    /// Bytes that make the device hash unique to this receipt (4).
    public var opaqueValue: Data
    /// SHA-1 of device identifier, opaque value and bundle ID bytes (5); see ``bundleIDBytes``.
    public var sha1Hash: Data
    /// The app's age rating, such as `4+` (10).
    public var ageRating: String?
    /// When the receipt was created (12). Verifiers check the certificates at this date.
    public var creationDate: Date?
    /// The download identifier (15).
    public var downloadID: Int64?
    /// The identifier of the app version that was installed (16).
    public var versionExternalIdentifier: Int64?
    /// One record per in-app purchase (17, repeated), in the order found.
    public var inAppPurchases: [InAppPurchaseReceipt]
    /// When the app was first bought (18).
    public var originalPurchaseDate: Date?
    /// The app version first bought (19); `1.0` in the sandbox.
    public var originalApplicationVersion: String?
    /// When the receipt expires (21); Xcode writes 4001-01-01.
    public var expirationDate: Date?
    /// Attributes of types this model does not interpret, and repeats of known types, as found;
    /// ordered by type, as they are written.
    public var otherAttributes: [ReceiptAttribute]
    /// Known attributes exactly as Apple encoded them, where that differs from how this model
    /// writes them (a version other than 1, an empty string, a PrintableString). They are written
    /// back as long as they still hold the property's current value.
    public var originalEncodings: [ReceiptAttribute]

    /// Creates a payload; only the four attributes every receipt carries are required.
    public init(
        receiptType: AppReceiptType? = nil,
        appItemID: Int64? = nil,
        bundleID: String,
        applicationVersion: String,
        opaqueValue: Data = Data(),
        sha1Hash: Data = Data(),
        ageRating: String? = nil,
        creationDate: Date? = nil,
        downloadID: Int64? = nil,
        versionExternalIdentifier: Int64? = nil,
        inAppPurchases: [InAppPurchaseReceipt] = [],
        originalPurchaseDate: Date? = nil,
        originalApplicationVersion: String? = nil,
        expirationDate: Date? = nil,
        otherAttributes: [ReceiptAttribute] = [],
        originalEncodings: [ReceiptAttribute] = []
    ) {
        self.receiptType = receiptType
        self.appItemID = appItemID
        self.bundleID = bundleID
        self.applicationVersion = applicationVersion
        self.opaqueValue = opaqueValue
        self.sha1Hash = sha1Hash
        self.ageRating = ageRating
        self.creationDate = creationDate
        self.downloadID = downloadID
        self.versionExternalIdentifier = versionExternalIdentifier
        self.inAppPurchases = inAppPurchases
        self.originalPurchaseDate = originalPurchaseDate
        self.originalApplicationVersion = originalApplicationVersion
        self.expirationDate = expirationDate
        self.otherAttributes = otherAttributes
        self.originalEncodings = originalEncodings
    }

    private enum CodingKeys: String, CodingKey {
        case receiptType
        case appItemID
        case bundleID
        case applicationVersion
        case opaqueValue
        case sha1Hash
        case ageRating
        case creationDate
        case downloadID
        case versionExternalIdentifier
        case inAppPurchases
        case originalPurchaseDate
        case originalApplicationVersion
        case expirationDate
        case otherAttributes
        case originalEncodings
    }

    /// Decodes a payload; lists and the opaque value and hash may be left out.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        receiptType = try container.decodeIfPresent(AppReceiptType.self, forKey: .receiptType)
        appItemID = try container.decodeIfPresent(Int64.self, forKey: .appItemID)
        bundleID = try container.decode(String.self, forKey: .bundleID)
        applicationVersion = try container.decode(String.self, forKey: .applicationVersion)
        opaqueValue = try container.decodeIfPresent(Data.self, forKey: .opaqueValue) ?? Data()
        sha1Hash = try container.decodeIfPresent(Data.self, forKey: .sha1Hash) ?? Data()
        ageRating = try container.decodeIfPresent(String.self, forKey: .ageRating)
        creationDate = try container.decodeIfPresent(Date.self, forKey: .creationDate)
        downloadID = try container.decodeIfPresent(Int64.self, forKey: .downloadID)
        versionExternalIdentifier = try container.decodeIfPresent(Int64.self, forKey: .versionExternalIdentifier)
        inAppPurchases = try container.decodeIfPresent([InAppPurchaseReceipt].self, forKey: .inAppPurchases) ?? []
        originalPurchaseDate = try container.decodeIfPresent(Date.self, forKey: .originalPurchaseDate)
        originalApplicationVersion = try container.decodeIfPresent(String.self, forKey: .originalApplicationVersion)
        expirationDate = try container.decodeIfPresent(Date.self, forKey: .expirationDate)
        otherAttributes = try container.decodeIfPresent([ReceiptAttribute].self, forKey: .otherAttributes) ?? []
        originalEncodings = try container.decodeIfPresent([ReceiptAttribute].self, forKey: .originalEncodings) ?? []
    }
}
