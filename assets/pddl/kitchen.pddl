; Kitchen domain: move items between the table, containers (pot, bowl, plate, box) and the
; drawers of a cabinet, opening and closing drawers as needed.
;
; What each predicate means on the table:
;   (on-table ?o)        item ?o lies on the counter/table top, outside containers and drawers.
;   (in ?o ?c)           item ?o lies inside container ?c (a pot, a bowl, ...).
;   (in-drawer ?o ?d)    item ?o lies inside drawer ?d.
;   (drawer-open ?d)     drawer ?d is pulled out far enough to reach into it.
;   (drawer-closed ?d)   drawer ?d is pushed shut. Exactly one of drawer-open / drawer-closed
;                        holds for each drawer; both are kept so goals can say "closed".
;   (hand-empty)         the gripper holds nothing (needed to grasp a drawer handle).
;   (holding ?o)         item ?o is in the gripper.
;
; Items inside a closed drawer cannot be reached; items may be put into or taken out of a
; drawer only while it is open.
(define (domain kitchen)
  (:requirements :strips :typing)
  (:types item container drawer - object)
  (:predicates
   (on-table ?o - item)
   (in ?o - item ?c - container)
   (in-drawer ?o - item ?d - drawer)
   (drawer-open ?d - drawer)
   (drawer-closed ?d - drawer)
   (hand-empty)
   (holding ?o - item))

  (:action pick
   :parameters (?o - item)
   :precondition (and (hand-empty)
                      (on-table ?o))
   :effect (and (holding ?o)
                (not (hand-empty))
                (not (on-table ?o))))

  (:action pick-from
   :parameters (?o - item ?c - container)
   :precondition (and (hand-empty)
                      (in ?o ?c))
   :effect (and (holding ?o)
                (not (hand-empty))
                (not (in ?o ?c))))

  (:action pick-from-drawer
   :parameters (?o - item ?d - drawer)
   :precondition (and (hand-empty)
                      (drawer-open ?d)
                      (in-drawer ?o ?d))
   :effect (and (holding ?o)
                (not (hand-empty))
                (not (in-drawer ?o ?d))))

  (:action place-on-table
   :parameters (?o - item)
   :precondition (holding ?o)
   :effect (and (on-table ?o)
                (hand-empty)
                (not (holding ?o))))

  (:action place-in
   :parameters (?o - item ?c - container)
   :precondition (holding ?o)
   :effect (and (in ?o ?c)
                (hand-empty)
                (not (holding ?o))))

  (:action place-in-drawer
   :parameters (?o - item ?d - drawer)
   :precondition (and (holding ?o)
                      (drawer-open ?d))
   :effect (and (in-drawer ?o ?d)
                (hand-empty)
                (not (holding ?o))))

  (:action open-drawer
   :parameters (?d - drawer)
   :precondition (and (hand-empty)
                      (drawer-closed ?d))
   :effect (and (drawer-open ?d)
                (not (drawer-closed ?d))))

  (:action close-drawer
   :parameters (?d - drawer)
   :precondition (and (hand-empty)
                      (drawer-open ?d))
   :effect (and (drawer-closed ?d)
                (not (drawer-open ?d)))))
