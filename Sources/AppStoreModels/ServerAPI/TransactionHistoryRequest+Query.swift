import Foundation

extension TransactionHistoryRequest {
    /// A query parameter that ``TransactionHistoryRequest/init(queryItems:)`` could not accept.
    public struct InvalidQueryParameter: Error, Hashable, Sendable, CustomStringConvertible {
        /// The parameter's name.
        public var name: String
        /// The value that was given.
        public var value: String
        /// The App Store Server API error that Apple answers for this mistake.
        public var errorCode: APIErrorCode

        /// Describes a rejected parameter.
        public init(name: String, value: String, errorCode: APIErrorCode) {
            self.name = name
            self.value = value
            self.errorCode = errorCode
        }

        public var description: String { "Invalid value \"\(value)\" for query parameter \(name)" }
    }

    /// The query parameters of this request, in a stable order, with repeated parameters repeated.
    ///
    /// Dates are written as whole milliseconds since 1970, the unit Apple expects. The values are not
    /// percent-encoded; whoever builds the URL does that.
    public func queryItems() -> [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        if let revision { items.append(("revision", revision)) }
        if let startDate { items.append(("startDate", String(startDate.epochMilliseconds))) }
        if let endDate { items.append(("endDate", String(endDate.epochMilliseconds))) }
        for productID in productIDs ?? [] { items.append(("productId", productID)) }
        for productType in productTypes ?? [] { items.append(("productType", productType.rawValue)) }
        if let sort { items.append(("sort", sort.rawValue)) }
        for group in subscriptionGroupIdentifiers ?? [] { items.append(("subscriptionGroupIdentifier", group)) }
        if let inAppOwnershipType { items.append(("inAppOwnershipType", inAppOwnershipType.rawValue)) }
        if let revoked { items.append(("revoked", revoked ? "true" : "false")) }
        return items
    }

    /// Reads a request back from query parameters, as the server side of the API does.
    ///
    /// Unknown parameters are ignored. Unknown enum values are kept (the caller decides whether to
    /// reject them); dates that are not whole numbers and `revoked` values other than `true` or
    /// `false` are rejected with the error code Apple uses for them.
    public init(queryItems: [(name: String, value: String)]) throws(InvalidQueryParameter) {
        self.init()
        for (name, value) in queryItems {
            switch name {
            case "revision":
                revision = value
            case "startDate":
                guard let milliseconds = Int64(value) else {
                    throw InvalidQueryParameter(name: name, value: value, errorCode: .invalidStartDate)
                }
                startDate = Date(epochMilliseconds: milliseconds)
            case "endDate":
                guard let milliseconds = Int64(value) else {
                    throw InvalidQueryParameter(name: name, value: value, errorCode: .invalidEndDate)
                }
                endDate = Date(epochMilliseconds: milliseconds)
            case "productId":
                productIDs = (productIDs ?? []) + [value]
            case "productType":
                productTypes = (productTypes ?? []) + [ProductType(rawValue: value)]
            case "sort":
                sort = Order(rawValue: value)
            case "subscriptionGroupIdentifier":
                subscriptionGroupIdentifiers = (subscriptionGroupIdentifiers ?? []) + [value]
            case "inAppOwnershipType":
                inAppOwnershipType = InAppOwnershipType(rawValue: value)
            case "revoked":
                switch value {
                case "true": revoked = true
                case "false": revoked = false
                default: throw InvalidQueryParameter(name: name, value: value, errorCode: .invalidRevoked)
                }
            default:
                continue
            }
        }
    }
}
