/// Text written into HTML or SVG markup made by hand (the checkout page, the dashboard's charts).
package enum HTMLText {
    /// `text` with the characters HTML gives a meaning (`& < > " '`) written as references, for
    /// text and for attribute values in double quotes.
    package static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
