import AppStoreModels
import AppStoreSecurity
import Foundation

/// Feeds any bytes to the BER/DER readers of app receipts: the PKCS#7 container (with its
/// certificates), the payload inside it with its in-app purchase records, and the quick transaction
/// ID extractor. Signature and chain checks are left out: they are not parsing, and they cost far
/// more than it. Throwing is the expected answer to bad input; any crash or memory error is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReceipt(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let signed = try? SignedAppReceipt(bytes: bytes) {
        _ = try? signed.signedData.serializedDER()
        _ = signed.receipt.serializedPayload()
        _ = signed.signerCertificate
    }
    _ = try? ReceiptTransactionIDExtractor.transactionID(inAppReceiptBytes: bytes)
    return 0
}
