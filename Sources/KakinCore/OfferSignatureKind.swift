/// What the server signs for an offer of a subscription: a promotional offer, or the customer's
/// eligibility for the introductory offer.
///
/// The app asks for one (`OfferSigningRequest.Kind`, the same type) and the ledger keeps it with
/// each signature it records (its raw value is the stored text).
public enum OfferSignatureKind: String, Codable, Hashable, Sendable, CaseIterable {
    /// A promotional offer of the subscription (the request names the offer).
    case promotional
    /// The customer's eligibility for the subscription's introductory offer, as the server decides it.
    case introductoryEligibility
}
