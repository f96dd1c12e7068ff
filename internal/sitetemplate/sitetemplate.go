// Package sitetemplate wraps texts in one news site's page template — a
// header, a navigation menu, a cookie banner, a sidebar, a newsletter box and
// a footer, about 600 words on lines of their own — as a crawl of one site
// sees its pages: the corpus that boilerplate removal is tested and measured
// on. It is internal: a test fixture (also written by gencorpus), not API.
package sitetemplate

import "strings"

// Header and Footer are the template's lines before and after a page's own
// text. Every page has exactly these lines.
var (
	Header = []string{
		"The Daily Ledger — independent news since 1887",
		"Home | World | Politics | Business | Markets | Technology | Science | Health | Sport | Culture | Opinion | Weather",
		"Subscribe | Sign in | Newsletters | Podcasts | Puzzles | Jobs | Classifieds | Events | Shop",
		"We use cookies and similar technologies to run this site, to measure how it is used, to personalise what you see and to show advertising that is relevant to you. You can accept all cookies, reject those that are not strictly necessary, or choose which purposes you agree to in your privacy settings; you can change your mind at any time from the link at the foot of every page.",
		"Accept all cookies | Reject non-essential cookies | Manage privacy settings",
		"Breaking: follow our live coverage of the day's main stories, updated through the night by our correspondents around the world.",
		"Advertisement",
	}
	Sidebar = []string{
		"Most read",
		"1. How a small town rebuilt its high street after the floods",
		"2. The quiet revolution in how cities collect their rubbish",
		"3. Ten walks to take before the end of the summer holidays",
		"4. Why the price of coffee has doubled in two years, explained",
		"5. Letters: readers respond to last week's debate on the railways",
		"Sign up to our morning briefing: the stories you need to know, in your inbox before breakfast every weekday. Free, and you can unsubscribe at any time.",
		"Enter your email address | Sign up",
		"Editor's picks",
		"The long read: inside the archive that kept a century of weather records by hand",
		"Interview: the composer who writes music for the sounds of the city at night",
		"Photo essay: a year on the islands where the ferry comes twice a week",
		"Explainer: what the new planning rules mean for the homes being built near you",
		"Related topics: local government, transport, housing, environment, education, health services, the economy",
		"By signing up you agree to receive emails from The Daily Ledger and accept our terms of service and privacy policy; we will never share your address with third parties without your consent.",
	}
	Footer = []string{
		"More from The Daily Ledger",
		"About us | Contact us | Work for us | Advertise with us | Complaints and corrections | Accessibility | Sitemap",
		"Terms of service | Privacy policy | Cookie policy | Manage privacy settings | Do not sell or share my personal information",
		"The Daily Ledger is a member of the Independent Press Standards Organisation. If you have a complaint about editorial content which relates to inaccuracy or intrusion, please contact the editor; if you are not satisfied with the response, you may contact the organisation directly.",
		"Our journalism is funded by our readers. If you value independent reporting that holds the powerful to account, please consider supporting us with a subscription or a one-off contribution: every reader who pays helps keep our reporting open to everyone, wherever they live and whatever they can afford.",
		"Support us | Subscribe | Gift a subscription | Student offers | Corporate subscriptions",
		"Follow us on Facebook, Twitter, Instagram, LinkedIn and YouTube, and download our apps for iPhone and Android to read the news wherever you are.",
		"Registered office: 1 Ledger Square, London. Registered in England and Wales, company number 00000001. All material on this site is protected by copyright.",
		"© 1887–2024 The Daily Ledger Media Group Limited. All rights reserved. Reproduction in whole or in part without written permission is prohibited.",
		"Got a story? Contact our newsroom in confidence by email, by post or through our secure messaging service; we protect our sources and read every message we receive.",
		"Back to top",
	}
)

// Lines returns every line of the template, in page order, without the
// page's own text (which goes between Header and Sidebar).
func Lines() []string {
	var out []string
	out = append(out, Header...)
	out = append(out, Sidebar...)
	return append(out, Footer...)
}

// Words returns the number of words of the template.
func Words() int {
	n := 0
	for _, l := range Lines() {
		n += len(strings.Fields(l))
	}
	return n
}

// Wrap returns text as a page of the site: the header, text, the sidebar
// and the footer, one per line, each line ended by "\n".
func Wrap(text string) string {
	var b strings.Builder
	for _, l := range Header {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(text)
	b.WriteByte('\n')
	for _, l := range Sidebar {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	for _, l := range Footer {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}
