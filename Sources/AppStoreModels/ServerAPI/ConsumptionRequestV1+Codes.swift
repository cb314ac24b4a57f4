extension ConsumptionRequestV1 {
    /// How much of a purchase the customer used.
    public struct ConsumptionStatus: WireEnum {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Not said.
        public static let undeclared = Self(rawValue: 0)
        /// Not used at all.
        public static let notConsumed = Self(rawValue: 1)
        /// Partly used.
        public static let partiallyConsumed = Self(rawValue: 2)
        /// Used up.
        public static let fullyConsumed = Self(rawValue: 3)

        public static let knownValues: [Self] = [.undeclared, .notConsumed, .partiallyConsumed, .fullyConsumed]
    }

    /// Whether a purchase was made on an Apple platform.
    public struct Platform: WireEnum {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Not said.
        public static let undeclared = Self(rawValue: 0)
        /// An Apple platform.
        public static let apple = Self(rawValue: 1)
        /// Another platform.
        public static let nonApple = Self(rawValue: 2)

        public static let knownValues: [Self] = [.undeclared, .apple, .nonApple]
    }

    /// Whether the app delivered a purchase, or why not.
    public struct DeliveryStatus: WireEnum {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Delivered and working.
        public static let deliveredAndWorkingProperly = Self(rawValue: 0)
        /// Not delivered because of a quality problem.
        public static let didNotDeliverDueToQualityIssue = Self(rawValue: 1)
        /// The wrong item was delivered.
        public static let deliveredWrongItem = Self(rawValue: 2)
        /// Not delivered because the developer's server was down.
        public static let didNotDeliverDueToServerOutage = Self(rawValue: 3)
        /// Not delivered because of a change of in-game currency.
        public static let didNotDeliverDueToInGameCurrencyChange = Self(rawValue: 4)
        /// Not delivered for another reason.
        public static let didNotDeliverForOtherReason = Self(rawValue: 5)

        public static let knownValues: [Self] = [
            .deliveredAndWorkingProperly, .didNotDeliverDueToQualityIssue, .deliveredWrongItem,
            .didNotDeliverDueToServerOutage, .didNotDeliverDueToInGameCurrencyChange, .didNotDeliverForOtherReason,
        ]
    }

    /// How long the customer's account has existed, in ranges of days.
    public struct AccountTenure: WireEnum {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Not said.
        public static let undeclared = Self(rawValue: 0)
        /// Up to 3 days.
        public static let upTo3Days = Self(rawValue: 1)
        /// 3 to 10 days.
        public static let from3To10Days = Self(rawValue: 2)
        /// 10 to 30 days.
        public static let from10To30Days = Self(rawValue: 3)
        /// 30 to 90 days.
        public static let from30To90Days = Self(rawValue: 4)
        /// 90 to 180 days.
        public static let from90To180Days = Self(rawValue: 5)
        /// 180 to 365 days.
        public static let from180To365Days = Self(rawValue: 6)
        /// More than 365 days.
        public static let over365Days = Self(rawValue: 7)

        public static let knownValues: [Self] = (0...7).map(Self.init(rawValue:))
    }

    /// How long the customer has used the app, in ranges.
    public struct PlayTime: WireEnum {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Not said.
        public static let undeclared = Self(rawValue: 0)
        /// Up to 5 minutes.
        public static let upTo5Minutes = Self(rawValue: 1)
        /// 5 to 60 minutes.
        public static let from5To60Minutes = Self(rawValue: 2)
        /// 1 to 6 hours.
        public static let from1To6Hours = Self(rawValue: 3)
        /// 6 to 24 hours.
        public static let from6To24Hours = Self(rawValue: 4)
        /// 1 to 4 days.
        public static let from1To4Days = Self(rawValue: 5)
        /// 4 to 16 days.
        public static let from4To16Days = Self(rawValue: 6)
        /// More than 16 days.
        public static let over16Days = Self(rawValue: 7)

        public static let knownValues: [Self] = (0...7).map(Self.init(rawValue:))
    }

    /// An amount of US dollars, in ranges; used for both lifetime purchases and lifetime refunds.
    public struct LifetimeDollars: WireEnum {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Not said.
        public static let undeclared = Self(rawValue: 0)
        /// Nothing.
        public static let zeroDollars = Self(rawValue: 1)
        /// 0.01 to 49.99 dollars.
        public static let under50Dollars = Self(rawValue: 2)
        /// 50 to 99.99 dollars.
        public static let from50To100Dollars = Self(rawValue: 3)
        /// 100 to 499.99 dollars.
        public static let from100To500Dollars = Self(rawValue: 4)
        /// 500 to 999.99 dollars.
        public static let from500To1000Dollars = Self(rawValue: 5)
        /// 1,000 to 1,999.99 dollars.
        public static let from1000To2000Dollars = Self(rawValue: 6)
        /// 2,000 dollars or more.
        public static let atLeast2000Dollars = Self(rawValue: 7)

        public static let knownValues: [Self] = (0...7).map(Self.init(rawValue:))
    }

    /// The state of the customer's account.
    public struct UserStatus: WireEnum {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Not said.
        public static let undeclared = Self(rawValue: 0)
        /// The account is in use.
        public static let active = Self(rawValue: 1)
        /// The account is suspended.
        public static let suspended = Self(rawValue: 2)
        /// The account was closed.
        public static let terminated = Self(rawValue: 3)
        /// The account has limited access.
        public static let limitedAccess = Self(rawValue: 4)

        public static let knownValues: [Self] = [.undeclared, .active, .suspended, .terminated, .limitedAccess]
    }

    /// What the developer would like Apple to do with a refund request.
    public struct RefundPreference: WireEnum {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Not said.
        public static let undeclared = Self(rawValue: 0)
        /// Grant the refund.
        public static let preferGrant = Self(rawValue: 1)
        /// Decline the refund.
        public static let preferDecline = Self(rawValue: 2)
        /// No preference.
        public static let noPreference = Self(rawValue: 3)

        public static let knownValues: [Self] = [.undeclared, .preferGrant, .preferDecline, .noPreference]
    }
}
