extension StoreKitConfiguration {
    /// The version of the `.storekit` format, such as 4.0.
    public struct Version: Codable, Hashable, Sendable {
        /// The major version.
        public var major: Int?
        /// The minor version.
        public var minor: Int?

        /// Creates a version; every field defaults to absent.
        public init(major: Int? = nil, minor: Int? = nil) {
            self.major = major
            self.minor = minor
        }

        enum CodingKeys: String, CodingKey {
            case major
            case minor
        }
    }

    /// The license agreement and privacy policies that the subscription UI links to.
    public struct AppPolicies: Codable, Hashable, Sendable {
        /// The text of the end-user license agreement; empty for Apple's standard one.
        public var eula: String?
        /// The privacy policy per locale.
        public var policies: [Policy]?

        /// Creates policies; every field defaults to absent.
        public init(eula: String? = nil, policies: [Policy]? = nil) {
            self.eula = eula
            self.policies = policies
        }

        enum CodingKeys: String, CodingKey {
            case eula
            case policies
        }
    }

    /// A privacy policy in one locale.
    public struct Policy: Codable, Hashable, Sendable {
        /// The locale, such as `en_US`.
        public var locale: String?
        /// The policy's text.
        public var policyText: String?
        /// Where the policy is published.
        public var policyURL: String?

        /// Creates a policy; every field defaults to absent.
        public init(locale: String? = nil, policyText: String? = nil, policyURL: String? = nil) {
            self.locale = locale
            self.policyText = policyText
            self.policyURL = policyURL
        }

        enum CodingKeys: String, CodingKey {
            case locale
            case policyText
            case policyURL
        }
    }

    /// The key Xcode uses to sign promotional offers in local testing.
    public struct SubscriptionOffersKeyPair: Codable, Hashable, Sendable {
        /// The key ID, passed as the offer's key identifier.
        public var id: String?
        /// The private key: base64 of a PKCS #8 P-256 key.
        public var privateKey: String?

        /// Creates a key pair; every field defaults to absent.
        public init(id: String? = nil, privateKey: String? = nil) {
            self.id = id
            self.privateKey = privateKey
        }

        enum CodingKeys: String, CodingKey {
            case id
            case privateKey
        }
    }
}
