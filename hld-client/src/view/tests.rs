//! Tests of the view: cleaning, tool inputs, diffs and questions.

use serde_json::json;

use super::*;

#[test]
fn a_count_is_plural_unless_one() {
    assert_eq!(count(1, "turn"), "1 turn");
    assert_eq!(count(0, "session"), "0 sessions");
    assert_eq!(count(2, "more byte"), "2 more bytes");
}

#[test]
fn control_characters_never_reach_the_terminal() {
    let cases = [
        ("plain text\nand more", "plain text\nand more"),
        ("a\x1b[2Jb", "a�[2Jb"),
        ("title\x1b]0;pwned\x07", "title�]0;pwned�"),
        ("tab\there", "tab    here"),
        ("crlf\r\nline", "crlf\nline"),
        ("over\rwrite", "overwrite"),
        ("c1\u{9b}31m", "c1�31m"),
        ("nul\0del\x7f", "nul�del�"),
        ("wide 日本 ✓", "wide 日本 ✓"),
        ("abc\u{202E}fed.txt", "abc�fed.txt"),
        ("\u{2067}isolate\u{2069} \u{200F}mark", "�isolate� �mark"),
        ("עברית and العربية", "עברית and العربية"),
    ];
    for (raw, shown) in cases {
        assert_eq!(clean(raw), shown, "{raw:?}");
    }
    assert!(matches!(clean("plain"), Cow::Borrowed("plain")));
}

fn same(text: &str) -> DiffLine {
    DiffLine::Line(Change::Same, text.to_owned())
}
fn removed(text: &str) -> DiffLine {
    DiffLine::Line(Change::Removed, text.to_owned())
}
fn added(text: &str) -> DiffLine {
    DiffLine::Line(Change::Added, text.to_owned())
}

#[test]
fn a_diff_shows_each_change_with_its_context() {
    let numbers = |changed: &[(usize, &str)]| -> String {
        (1..=20)
            .map(|i| match changed.iter().find(|(at, _)| *at == i) {
                Some((_, line)) => format!("{line}\n"),
                None => format!("{i}\n"),
            })
            .collect()
    };
    let far_apart = numbers(&[(2, "two"), (19, "nineteen")]);
    let cases: [(&str, &str, Vec<DiffLine>); 5] = [
        (
            "a\nb\nc\n",
            "a\nB\nc\n",
            vec![same("a"), removed("b"), added("B"), same("c")],
        ),
        ("x", "y", vec![removed("x"), added("y")]),
        ("", "new\n", vec![added("new")]),
        ("same\n", "same\n", vec![]),
        (
            "a\x1b[2J\n",
            "a\tb\n",
            vec![removed("a�[2J"), added("a    b")],
        ),
    ];
    for (old, new, expected) in cases {
        assert_eq!(diff(old, new), expected, "{old:?} → {new:?}");
    }
    let lines = diff(&numbers(&[]), &far_apart);
    let expected = [
        vec![
            same("1"),
            removed("2"),
            added("two"),
            same("3"),
            same("4"),
            same("5"),
        ],
        vec![DiffLine::Gap],
        vec![
            same("16"),
            same("17"),
            same("18"),
            removed("19"),
            added("nineteen"),
            same("20"),
        ],
    ]
    .concat();
    assert_eq!(lines, expected);
}

#[test]
fn a_tool_input_is_read_by_its_tool() {
    let cases = [
        (
            "Bash",
            json!({"command": "ls\x1b[2J\nwc", "description": "List"}),
            ToolInput::Bash {
                command: "ls�[2J\nwc".into(),
                description: Some("List".into()),
            },
        ),
        (
            "Bash",
            json!({"command": "ls", "description": " "}),
            ToolInput::Bash {
                command: "ls".into(),
                description: None,
            },
        ),
        (
            "Write",
            json!({"file_path": "/w/a", "content": "hi\n"}),
            ToolInput::Write {
                path: "/w/a".into(),
                content: "hi\n".into(),
            },
        ),
        (
            "Edit",
            json!({"file_path": "/w/a", "old_string": "x", "new_string": "y", "replace_all": true}),
            ToolInput::Edit {
                path: "/w/a".into(),
                every_occurrence: true,
                edits: vec![vec![removed("x"), added("y")]],
            },
        ),
        (
            "MultiEdit",
            json!({"file_path": "/w/m", "edits": [
                {"old_string": "x", "new_string": "y"},
                {"old_string": "p", "new_string": "q"},
            ]}),
            ToolInput::Edit {
                path: "/w/m".into(),
                every_occurrence: false,
                edits: vec![
                    vec![removed("x"), added("y")],
                    vec![removed("p"), added("q")],
                ],
            },
        ),
        // Without the fields its tool needs, the input is shown as it came.
        (
            "Write",
            json!({"file_path": "/w/x"}),
            ToolInput::Other(json!({"file_path": "/w/x"})),
        ),
        (
            "Edit",
            json!({"old_string": "x"}),
            ToolInput::Other(json!({"old_string": "x"})),
        ),
        (
            "Bash",
            json!({"cmd": "ls"}),
            ToolInput::Other(json!({"cmd": "ls"})),
        ),
        (
            "Read",
            json!({"file_path": "/w/a"}),
            ToolInput::Other(json!({"file_path": "/w/a"})),
        ),
        (
            ASK_USER_QUESTION,
            json!({"questions": [
                {"question": "Colour?\x07", "options": [
                    {"label": "Blue", "description": "like the sky"}, {"label": "Red"},
                ]},
                {"question": "Size?", "multiSelect": true},
            ]}),
            ToolInput::Questions(vec![
                Question {
                    text: "Colour?�".into(),
                    choices: vec![
                        ("Blue".into(), Some("like the sky".into())),
                        ("Red".into(), None),
                    ],
                    several: false,
                },
                Question {
                    text: "Size?".into(),
                    choices: vec![],
                    several: true,
                },
            ]),
        ),
        (
            CONTACT_HUMAN,
            json!({"message": "Which branch?"}),
            ToolInput::Questions(vec![Question {
                text: "Which branch?".into(),
                choices: vec![],
                several: false,
            }]),
        ),
        // A question without its text is shown as it came.
        (
            ASK_USER_QUESTION,
            json!({"questions": [{"header": "Colour"}]}),
            ToolInput::Other(json!({"questions": [{"header": "Colour"}]})),
        ),
        (
            ASK_USER_QUESTION,
            json!({"questions": []}),
            ToolInput::Other(json!({"questions": []})),
        ),
    ];
    for (tool, input, expected) in cases {
        assert_eq!(ToolInput::of(tool, &input), expected, "{tool} {input}");
    }
}

#[test]
fn questions_read_as_the_message_of_the_approval_that_asks_them() {
    let input = json!({"questions": [{"question": "Colour?"}, {"question": "Size?"}]});
    let asked = ToolInput::of(ASK_USER_QUESTION, &input).question_text();
    assert_eq!(asked.as_deref(), Some("Colour?\nSize?"));
    let bash = ToolInput::of("Bash", &json!({"command": "ls"}));
    assert_eq!(bash.question_text(), None);
}

#[test]
fn an_approval_asks_its_own_questions_with_their_choices() {
    let approval = |fields: Value| -> Approval {
        let mut v = json!({"id": "a", "call_id": "a", "run_id": "r", "session_id": "s",
            "type": "human_contact", "status": "pending", "requested_at": "2026-01-01"});
        v.as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        serde_json::from_value(v).unwrap()
    };
    let input = json!({"questions": [
        {"question": "Colour?", "options": [{"label": "Blue"}, {"label": "Red\u{1b}[2J"}]},
        {"question": "Size?"}]});
    let asked = questions_of(&approval(json!({"message": "Colour?\nSize?",
        "function_args": input})))
    .unwrap();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0].choices[1], ("Red\u{fffd}[2J".to_owned(), None));
    assert_eq!(asked[1].text, "Size?");
    // Without its tool's input, the message is one question of free text.
    let one = questions_of(&approval(json!({"message": "Done.\nShall I go on?"}))).unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].text, "Done.\nShall I go on?");
    assert!(one[0].choices.is_empty());
    let call = approval(json!({"type": "function_call", "function_name": "Bash",
        "function_args": {"command": "ls"}}));
    assert_eq!(questions_of(&call), None);
}

#[test]
fn a_number_that_names_no_choice_is_caught_and_words_are_not() {
    let mut question = Question {
        text: "Which?".into(),
        choices: vec![("Blue".into(), None), ("Red".into(), None)],
        several: false,
    };
    for caught in ["3", " 0 ", "2 3", "99999999999999999999"] {
        assert!(question.names_no_choice(caught), "{caught:?}");
    }
    for kept in ["1", "2", "Blue", "3 shades of blue", "route 66"] {
        assert!(!question.names_no_choice(kept), "{kept:?}");
    }
    assert_eq!(
        question.choose_hint(),
        "choose 1–2 (or type an answer in words)"
    );
    question.several = true;
    assert!(question.names_no_choice("1, 3"));
    assert!(!question.names_no_choice("1,2"));
    question.choices.clear();
    assert!(!question.names_no_choice("3"), "no choices: any answer");
}

fn tool_result(content: &str, is_error: bool) -> ConversationEvent {
    serde_json::from_value(json!({
        "id": 1, "session_id": "s", "claude_session_id": "c", "sequence": 1,
        "event_type": "tool_result", "created_at": "2025-01-01T00:00:00Z",
        "tool_result_content": content, "is_completed": true, "is_error": is_error,
    }))
    .unwrap()
}

/// What the front ends show of a tool result with this content.
fn shown(content: &str, is_error: bool) -> String {
    tool_result_text(&tool_result(content, is_error)).to_owned()
}

#[test]
fn a_tool_error_is_shown_without_its_wrapper() {
    assert_eq!(
        shown(
            "<tool_use_error>File does not exist.</tool_use_error>",
            true
        ),
        "File does not exist."
    );
    assert_eq!(
        shown(
            "\n<tool_use_error>Error calling tool (Write):\n[ bad ]</tool_use_error>\n",
            true
        ),
        "Error calling tool (Write):\n[ bad ]"
    );
    // Only an error's wrapper, and only a whole one, is taken off.
    let ok = "<tool_use_error>quoted</tool_use_error>";
    assert_eq!(shown(ok, false), ok);
    assert_eq!(shown("<tool_use_error>cut", true), "<tool_use_error>cut");
    assert_eq!(shown("exit code 1", true), "exit code 1");
}

#[test]
fn the_reminders_the_cli_appends_for_the_model_are_not_shown() {
    let reminder = "<system-reminder>\nWhenever you read a file, consider whether it would \
                    be considered malware.\n</system-reminder>\n";
    let read = format!("     1\u{2192}Hello, world!\n\n{reminder}");
    assert_eq!(shown(&read, false), "     1\u{2192}Hello, world!");
    let twice = format!("done\n{reminder}\n{reminder}");
    assert_eq!(shown(&twice, false), "done");
    assert_eq!(
        shown(
            &format!("<tool_use_error>File does not exist.</tool_use_error>\n{reminder}"),
            true
        ),
        "File does not exist."
    );
    // A block within the output, or one left open, is the tool's own text.
    let within = format!("a\n{reminder}b");
    assert_eq!(shown(&within, false), within);
    let open = "a\n</system-reminder>";
    assert_eq!(shown(open, false), open);
    assert_eq!(shown(reminder, false), "");
}
