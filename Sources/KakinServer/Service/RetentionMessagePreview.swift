public import AppStoreModels

/// How a retention message reads on the page where a subscriber may cancel, in plain text: the
/// header where its position puts it, the image by its alternative text, the body, the bullet
/// points; and what Apple would refuse in it (Apple publishes the limits, `RetentionMessaging` in
/// AppStoreModels, and checks them at upload). Shown by `kakin retention preview` and the
/// dashboard's upload form.
public struct RetentionMessagePreview: Hashable, Sendable {
    /// The message's lines, top to bottom, as the page shows them.
    public var lines: [String]
    /// What Apple would refuse at upload (too long a header, body, alternative text or bullet
    /// point, too many bullet points, a header above an image the message lacks); empty when none.
    public var problems: [String]

    /// The preview of `message`.
    public init(_ message: UploadMessageRequestBody) {
        var lines: [String] = []
        let imageLine = message.image.map { "[image: \($0.altText)]" }
        if message.headerPosition == .aboveImage {
            lines.append(message.header)
            lines += imageLine.map { [$0] } ?? []
        } else {
            lines += imageLine.map { [$0] } ?? []
            lines.append(message.header)
        }
        lines.append(message.body)
        for point in message.bulletPoints ?? [] { lines.append("• \(point.text)") }
        self.lines = lines

        var problems: [String] = []
        func limit(_ text: String, _ most: Int, _ what: String) {
            if text.count > most { problems.append("the \(what) has \(text.count) characters; Apple allows \(most)") }
        }
        limit(message.header, RetentionMessaging.maximumHeaderLength, "header")
        limit(message.body, RetentionMessaging.maximumBodyLength, "body")
        if let image = message.image {
            limit(image.altText, RetentionMessaging.maximumAltTextLength, "alternative text")
        }
        let points = message.bulletPoints ?? []
        if points.count > RetentionMessaging.maximumBulletPoints {
            problems.append("\(points.count) bullet points; Apple allows \(RetentionMessaging.maximumBulletPoints)")
        }
        for (index, point) in points.enumerated() {
            limit(point.text, RetentionMessaging.maximumBulletPointTextLength, "bullet point \(index + 1)")
            limit(
                point.altText, RetentionMessaging.maximumAltTextLength, "bullet point \(index + 1)'s alternative text")
        }
        if message.headerPosition == .aboveImage, message.image == nil {
            problems.append("the header is placed above an image, and the message has none")
        }
        self.problems = problems
    }

    /// The lines, then each problem on a line of its own after `!`.
    public var text: String {
        (lines + problems.map { "! \($0)" }).joined(separator: "\n")
    }
}
