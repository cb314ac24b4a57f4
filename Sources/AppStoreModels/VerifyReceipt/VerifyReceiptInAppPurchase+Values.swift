public import Foundation

extension VerifyReceiptInAppPurchase {
    /// The purchase date; setting it fills all three `purchase_date` keys.
    public var purchaseDate: Date? {
        get { VerifyReceiptDate.date(milliseconds: purchaseDateMS, gmt: purchaseDateGMT) }
        set { (purchaseDateGMT, purchaseDateMS, purchaseDatePST) = VerifyReceiptDate.fields(newValue) }
    }

    /// The original purchase date; setting it fills all three `original_purchase_date` keys.
    public var originalPurchaseDate: Date? {
        get { VerifyReceiptDate.date(milliseconds: originalPurchaseDateMS, gmt: originalPurchaseDateGMT) }
        set {
            (originalPurchaseDateGMT, originalPurchaseDateMS, originalPurchaseDatePST) =
                VerifyReceiptDate.fields(newValue)
        }
    }

    /// The subscription's expiry; setting it fills all three `expires_date` keys.
    public var expiresDate: Date? {
        get { VerifyReceiptDate.date(milliseconds: expiresDateMS, gmt: expiresDateGMT) }
        set { (expiresDateGMT, expiresDateMS, expiresDatePST) = VerifyReceiptDate.fields(newValue) }
    }

    /// When Apple refunded the purchase; setting it fills all three `cancellation_date` keys.
    public var cancellationDate: Date? {
        get { VerifyReceiptDate.date(milliseconds: cancellationDateMS, gmt: cancellationDateGMT) }
        set { (cancellationDateGMT, cancellationDateMS, cancellationDatePST) = VerifyReceiptDate.fields(newValue) }
    }

    /// ``quantity`` as a number.
    public var quantityValue: Int? { quantity.flatMap { Int($0) } }

    /// ``isTrialPeriod`` as a Boolean.
    public var isTrialPeriodValue: Bool? { isTrialPeriod.flatMap(FlexibleBool.parse) }

    /// ``isInIntroOfferPeriod`` as a Boolean.
    public var isInIntroOfferPeriodValue: Bool? { isInIntroOfferPeriod.flatMap(FlexibleBool.parse) }

    /// ``isUpgraded`` as a Boolean.
    public var isUpgradedValue: Bool? { isUpgraded.flatMap(FlexibleBool.parse) }

    /// ``cancellationReason`` read with the same meaning as a transaction's revocation reason.
    public var cancellationReasonValue: RevocationReason? {
        cancellationReason.flatMap { Int($0) }.map(RevocationReason.init(rawValue:))
    }
}

extension VerifyReceiptDate {
    /// The three stored strings for `date`, or three `nil`s.
    static func fields(_ date: Date?) -> (String?, String?, String?) {
        guard let date else { return (nil, nil, nil) }
        let triple = VerifyReceiptDate(date)
        return (triple.gmt, triple.milliseconds, triple.pacific)
    }
}
