import AppStoreModels
import Foundation
import KakinLedger
import KakinWire

/// An app's upload of a signed transaction, verified: the signed bytes to record, their digest
/// and the decoded payload, each made once and carried together from verification to the ledger.
///
/// The bytes are those the app posted, or, when the leaf that signed them has expired since,
/// Apple's fresh signing of the same transaction (fetched again and verified); `digest` is always
/// the SHA-256 of `signedTransaction`.
struct VerifiedUpload: Sendable {
    /// The compact JWS to record.
    let signedTransaction: String
    /// `SignedDigest(signedTransaction)`: the key of the duplicate lookup and of the stored row.
    let digest: SignedDigest
    /// The verified payload.
    let payload: JWSTransactionDecodedPayload

    /// The ledger row of this upload for `appUserID`, recorded at `date`.
    func record(appUserID: String, at date: Date) throws(ServerError) -> RecordedTransaction {
        try PurchaseService.record(from: payload, jws: signedTransaction, appUserID: appUserID, source: .app, at: date)
    }
}
