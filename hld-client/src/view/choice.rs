//! An answer to a question of choices as it is read: a choice's number as its label.

use super::Question;

impl Question {
    /// `answer` as the agent is told it (see [`read_choice`]): a choice's number as its
    /// label, words as typed.
    pub fn read(&self, answer: &str) -> String {
        let labels: Vec<&str> = self.choices.iter().map(|(l, _)| l.as_str()).collect();
        read_choice(&labels, self.several, answer)
    }
}

/// `answer` (trimmed) to a question whose choices are `labels`, as it is read: the label of
/// the choice whose number it is (1 for the first). A question that takes `several` choices
/// takes several numbers, apart by commas or spaces: their labels are joined by ", ", the
/// form Claude Code reads such an answer in. An answer that is a label, or names no choice,
/// stays as it is. The daemon reads answers so, and front ends echo them so.
pub fn read_choice(labels: &[&str], several: bool, answer: &str) -> String {
    let answer = answer.trim();
    if labels.contains(&answer) {
        return answer.to_owned();
    }
    let label = |n: &str| {
        labels
            .get(n.parse::<usize>().ok()?.checked_sub(1)?)
            .copied()
    };
    let numbers: Vec<&str> = match several {
        true => answer
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|n| !n.is_empty())
            .collect(),
        false => vec![answer],
    };
    match numbers.into_iter().map(label).collect::<Option<Vec<_>>>() {
        Some(picked) if !picked.is_empty() => picked.join(", "),
        _ => answer.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_read_as_the_labels_its_numbers_pick() {
        let mut question = Question {
            text: "Which?".into(),
            choices: vec![("Blue".into(), None), ("Red".into(), None)],
            several: false,
        };
        assert_eq!(question.read(" 2 "), "Red");
        assert_eq!(question.read("sky blue"), "sky blue");
        assert_eq!(question.read("3"), "3");
        assert_eq!(question.read("1, 2"), "1, 2");
        question.several = true;
        assert_eq!(question.read("2, 1"), "Red, Blue");
        assert_eq!(question.read("1 3"), "1 3");
        // A label that is a number is that choice, not the choice of its number.
        assert_eq!(read_choice(&["3", "1"], false, "1"), "1");
        assert_eq!(read_choice(&["3", "1"], false, "2"), "1");
    }
}
