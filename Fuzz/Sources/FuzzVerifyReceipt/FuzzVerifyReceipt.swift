import AppStoreModels
import Foundation

/// Feeds any bytes to the verifyReceipt request and response models and reads every typed value
/// (dates, numbers, flags) the response offers. Throwing is the expected answer to bad input; any
/// crash or memory error is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVerifyReceipt(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    let decoder = JSONDecoder()
    _ = try? decoder.decode(VerifyReceiptRequest.self, from: bytes)
    guard let response = try? decoder.decode(VerifyReceiptResponse.self, from: bytes) else { return 0 }
    _ = response.status
    if let receipt = response.receipt {
        read(receipt)
    }
    for purchase in response.latestReceiptInfo ?? [] {
        read(purchase)
    }
    for renewal in response.pendingRenewalInfo ?? [] {
        _ = renewal.gracePeriodExpiresDate
        _ = renewal.autoRenewStatusValue
        _ = renewal.expirationIntentValue
        _ = renewal.priceIncreaseStatusValue
    }
    _ = try? JSONEncoder().encode(response)
    return 0
}

private func read(_ receipt: VerifyReceiptReceipt) {
    _ = receipt.receiptCreationDate
    _ = receipt.requestDate
    _ = receipt.originalPurchaseDate
    _ = receipt.preorderDate
    _ = receipt.expirationDate
    for purchase in receipt.inApp ?? [] {
        read(purchase)
    }
}

private func read(_ purchase: VerifyReceiptInAppPurchase) {
    _ = purchase.purchaseDate
    _ = purchase.originalPurchaseDate
    _ = purchase.expiresDate
    _ = purchase.cancellationDate
    _ = purchase.quantityValue
    _ = purchase.isTrialPeriodValue
    _ = purchase.isInIntroOfferPeriodValue
    _ = purchase.cancellationReasonValue
}
